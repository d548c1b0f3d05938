import * as vscode from 'vscode';
import { describeServerError } from './serverErrors';

/**
 * Read-only Markdown documents under one URI scheme, their text fetched from the server. A command
 * fetches first (so it can show the server's error with its code) and then opens the document;
 * a document VS Code restores on its own is fetched lazily.
 */
export class MarkdownDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changes = new vscode.EventEmitter<vscode.Uri>();
  /** Fired when a document's text was fetched again. */
  readonly onDidChange = this.changes.event;

  constructor(private readonly fetch: (uri: vscode.Uri) => Promise<string>) {}

  /** Fetch a document's text now (errors propagate to the caller) and tell open editors. */
  async refresh(uri: vscode.Uri): Promise<void> {
    const text = await this.fetch(uri);
    this.texts.set(uri.toString(), text);
    this.changes.fire(uri);
  }

  /** Fetch, then show the document beside the current editor, read-only. */
  async show(uri: vscode.Uri): Promise<vscode.TextEditor> {
    await this.refresh(uri);
    const document = await vscode.workspace.openTextDocument(uri);
    return vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: false });
  }

  /**
   * The fetched text; a document never fetched (e.g. restored after a reload) is fetched now, and
   * a failure becomes the document's text, since nobody else would see it.
   */
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const known = this.texts.get(uri.toString());
    if (known !== undefined) return known;
    try {
      const text = await this.fetch(uri);
      this.texts.set(uri.toString(), text);
      return text;
    } catch (error) {
      return `**Could not load this document.** ${describeServerError(error)}\n`;
    }
  }

  /** Forget a closed document's text. */
  forget(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
  }

  dispose(): void {
    this.changes.dispose();
    this.texts.clear();
  }
}
