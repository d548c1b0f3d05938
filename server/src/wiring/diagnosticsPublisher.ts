import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Diagnostic, PublishDiagnosticsParams } from 'vscode-languageserver/node';
import { isSessionReferenceError } from '@dsh-session-ls/shared';

/** What the publisher needs from its host. */
export interface DiagnosticsPublisherOptions {
  /** The open document of a URI, if it is still open. */
  document(uri: string): TextDocument | undefined;
  /** Every open document. */
  all(): readonly TextDocument[];
  /** Compute a document's diagnostics (abortable). */
  compute(document: TextDocument, signal: AbortSignal): Promise<Diagnostic[]>;
  /** Push them to the client. */
  publish(params: PublishDiagnosticsParams): void;
  log(message: string): void;
  /** Delay after an edit before checking, so typing is not re-checked on every keystroke. */
  debounceMs?: number;
}

interface Pending {
  timer?: NodeJS.Timeout;
  controller?: AbortController;
}

/**
 * Pushes diagnostics for open documents: debounced after each change, re-run for all on demand (store or
 * settings changed). A newer run cancels an older one, and a result for a version that is no longer
 * current, or a closed document, is dropped.
 */
export class DiagnosticsPublisher {
  private readonly pending = new Map<string, Pending>();
  private disposed = false;

  constructor(private readonly options: DiagnosticsPublisherOptions) {}

  /** Check a document again after the debounce delay (`immediately`: on the next tick). */
  schedule(uri: string, immediately = false): void {
    if (this.disposed) return;
    this.cancel(uri);
    this.pending.set(uri, { timer: setTimeout(() => void this.run(uri), immediately ? 0 : (this.options.debounceMs ?? 250)) });
  }

  /** Check every open document again. */
  scheduleAll(): void {
    for (const document of this.options.all()) this.schedule(document.uri);
  }

  /** Stop checking a closed document and clear what the client shows for it. */
  closed(uri: string): void {
    this.cancel(uri);
    this.pending.delete(uri);
    if (!this.disposed) this.options.publish({ uri, diagnostics: [] });
  }

  /** Stop everything (server shutdown). */
  dispose(): void {
    this.disposed = true;
    for (const uri of [...this.pending.keys()]) this.cancel(uri);
    this.pending.clear();
  }

  private cancel(uri: string): void {
    const entry = this.pending.get(uri);
    if (entry?.timer !== undefined) clearTimeout(entry.timer);
    entry?.controller?.abort(new Error('superseded'));
  }

  private async run(uri: string): Promise<void> {
    const document = this.options.document(uri);
    if (document === undefined || this.disposed) return;
    const controller = new AbortController();
    this.pending.set(uri, { controller });
    const version = document.version;
    try {
      const diagnostics = await this.options.compute(document, controller.signal);
      const current = this.options.document(uri);
      if (controller.signal.aborted || current === undefined || current.version !== version || this.disposed) return;
      this.options.publish({ uri, version, diagnostics });
    } catch (error) {
      if (controller.signal.aborted || (isSessionReferenceError(error) && error.code === 'SESSION_REFERENCE_CANCELLED')) return;
      this.options.log(`diagnostics of ${uri} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    } finally {
      if (this.pending.get(uri)?.controller === controller) this.pending.delete(uri);
    }
  }
}
