/**
 * Requests during the first index (lsp-contract.md, First answers): commands, hovers and document links
 * wait for it with work-done progress on the request's own token, and diagnostics are published from it
 * on; completion waits up to a short bound, a newer completion of the same document superseding an older
 * one still waiting.
 */
import type { ProgressToken, WorkDoneProgressReporter } from 'vscode-languageserver/node';
import { cancelledError, raceWithSignal } from '../resolver';
import type { StoreStatus, Subscription } from '../store/service';

/**
 * How long a completion request waits for the first index before it answers from what is indexed so far,
 * with `isIncomplete: true`. Long enough that a small store is complete by then even on a busy machine (a
 * 19-session store takes 200–300 ms after `initialize`), short enough that the answer, built after the
 * wait, still comes within 1 s of the request while a large or hostile store is first indexed.
 */
export const COMPLETION_FIRST_INDEX_WAIT_MS = 700;

/** The title of the progress a request shows while it waits for the first index. */
export const WAIT_PROGRESS_TITLE = 'Waiting for the dsh session index';

/** What waiting needs from the workspace. */
export interface FirstIndex {
  /** True once a store is open and its first index is built. */
  indexed(): boolean;
  /** Resolves once it is; rejects CANCELLED when `signal` aborts. */
  whenIndexed(signal?: AbortSignal): Promise<void>;
  /** Indexing progress of the current store. */
  storeStatus(): StoreStatus;
  /** Subscribe to the current store's progress (nothing when no store is open). */
  onStatus(listener: () => void): Subscription | undefined;
}

/** The percentage and message of indexing progress. */
export function indexingProgress(status: StoreStatus): { percentage: number | undefined; message: string } {
  const { indexed, discovered } = status;
  return {
    percentage: discovered > 0 ? Math.min(100, Math.floor((indexed / discovered) * 100)) : undefined,
    message: `${indexed}/${discovered} sessions`,
  };
}

/** A client's `workDoneToken`, when it is one (a string or an integer); anything else is ignored. */
export function progressToken(params: unknown): ProgressToken | undefined {
  const token = (params as { workDoneToken?: unknown } | null | undefined)?.workDoneToken;
  return typeof token === 'string' || Number.isInteger(token) ? (token as ProgressToken) : undefined;
}

/**
 * Work-done progress on a request's token while the request waits for the first index: begun the first
 * time it waits, reported as indexing advances, done when the request ends.
 */
export class FirstIndexWaitProgress {
  private reporter?: WorkDoneProgressReporter;
  private subscription?: Subscription;
  private ended = false;

  constructor(
    private readonly index: FirstIndex,
    /** The reporter on the request's token (attached only if the request waits). */
    private readonly attach: () => WorkDoneProgressReporter,
  ) {}

  /** The request waits: begin (once). */
  begin(): void {
    if (this.reporter !== undefined || this.ended) return;
    this.reporter = this.attach();
    const { percentage, message } = indexingProgress(this.index.storeStatus());
    this.reporter.begin(WAIT_PROGRESS_TITLE, percentage, message, false);
    this.subscription = this.index.onStatus(() => {
      const next = indexingProgress(this.index.storeStatus());
      if (next.percentage === undefined) this.reporter?.report(next.message);
      else this.reporter?.report(next.percentage, next.message);
    });
  }

  /** The request ended. */
  done(): void {
    if (this.ended) return;
    this.ended = true;
    this.subscription?.dispose();
    this.reporter?.done();
  }
}

/**
 * Completion requests waiting for the first index, one per document: a newer request for a document
 * supersedes the one waiting, which answers RequestCancelled (the client has moved on; LSP lets a server
 * cancel a request whose answer is outdated).
 */
export class CompletionFirstIndexWaits {
  private readonly waiting = new Map<string, AbortController>();

  constructor(
    private readonly index: FirstIndex,
    private readonly boundMs: number = COMPLETION_FIRST_INDEX_WAIT_MS,
  ) {}

  /**
   * Wait for the first index up to the bound: true when it is built, false when the bound passed first.
   * Rejects CANCELLED when `signal` aborts or a newer request for `uri` supersedes this one.
   */
  async wait(uri: string, signal: AbortSignal): Promise<boolean> {
    if (this.index.indexed()) return true;
    this.waiting.get(uri)?.abort(new Error('superseded by a newer completion request for the document'));
    const own = new AbortController();
    this.waiting.set(uri, own);
    const follow = (): void => own.abort(signal.reason);
    if (signal.aborted) follow();
    else signal.addEventListener('abort', follow, { once: true });
    let timer: NodeJS.Timeout | undefined;
    try {
      const bound = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.boundMs)));
      const indexed = await Promise.race([raceWithSignal(this.index.whenIndexed(own.signal), own.signal).then(() => true), bound]);
      // Superseded just as the bound passed: the newer request answers, not this one.
      if (own.signal.aborted) throw cancelledError(own.signal);
      return indexed;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', follow);
      if (this.waiting.get(uri) === own) this.waiting.delete(uri);
      // Release the wait on the index when the bound passed first.
      if (!own.signal.aborted) own.abort(new Error('done waiting'));
    }
  }
}
