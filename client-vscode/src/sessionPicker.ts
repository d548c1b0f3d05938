import type { SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import * as vscode from 'vscode';
import { candidateQuickPickItems, errorQuickPickItem, type SessionPickerItem } from './quickPickItems';
import { describeServerError, isCancellation } from './serverErrors';

/** Fetches the server's candidates for a query. */
export type CandidateSource = (query: string, token: vscode.CancellationToken) => Promise<SessionReferenceMentionCandidate[]>;

/**
 * Let the user pick a session: a quick pick that asks the server again as the query changes (the
 * server matches ids, cwds and titles), drops answers to queries already replaced, and resolves
 * with the accepted candidate, or undefined when dismissed.
 */
export function pickSession(source: CandidateSource, now: () => number = Date.now): Promise<SessionReferenceMentionCandidate | undefined> {
  const picker = vscode.window.createQuickPick<SessionPickerItem>();
  picker.title = 'Insert session reference';
  picker.placeholder = 'Search dsh sessions by title, id or working directory';
  picker.matchOnDescription = true;
  picker.matchOnDetail = true;
  let pending: vscode.CancellationTokenSource | undefined;

  const load = async (query: string): Promise<void> => {
    pending?.cancel();
    pending?.dispose();
    const request = new vscode.CancellationTokenSource();
    pending = request;
    picker.busy = true;
    try {
      const candidates = await source(query, request.token);
      if (pending !== request) return;
      picker.items = candidateQuickPickItems(candidates, now());
    } catch (error) {
      if (pending !== request || isCancellation(error)) return;
      picker.items = [errorQuickPickItem(describeServerError(error))];
    } finally {
      if (pending === request) picker.busy = false;
    }
  };

  return new Promise((resolve) => {
    let chosen: SessionReferenceMentionCandidate | undefined;
    picker.onDidChangeValue((query) => void load(query));
    picker.onDidAccept(() => {
      chosen = picker.selectedItems[0]?.candidate;
      if (chosen) picker.hide();
    });
    picker.onDidHide(() => {
      pending?.cancel();
      pending?.dispose();
      pending = undefined;
      picker.dispose();
      resolve(chosen);
    });
    picker.show();
    void load('');
  });
}
