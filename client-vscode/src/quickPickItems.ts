import {
  displaySafeLabel,
  displaySafeText,
  formatAge,
  formatSessionReferenceMention,
  type SessionCommandResult,
  type SessionCommands,
  type SessionReferenceMentionCandidate,
} from '@dsh-session-ls/shared';

// VS Code renders `$(name)` in quick-pick text as an icon; a backslash keeps it literal.
const THEME_ICON = /(\\)?\$\([A-Za-z0-9-]+(?:~[A-Za-z0-9-]*)?\)/g;

/** Session text made literal for a quick pick: `$(name)` is shown as typed, not as an icon. */
export function escapeThemeIcons(text: string): string {
  return text.replace(THEME_ICON, (match, escaped: string | undefined) => (escaped ? match : '\\' + match));
}

/** One row of the "Insert session reference…" quick pick (structurally a `vscode.QuickPickItem`). */
export interface CandidateQuickPickItem {
  /** The display-safe title. */
  label: string;
  /** The age, e.g. "3 days ago". */
  description: string;
  /** The cwd, or "(no cwd)". */
  detail: string;
  /** The server already matched the query (on id, cwd or title); VS Code must not filter its answer again. */
  alwaysShow: true;
  /** The candidate the row stands for. */
  candidate: SessionReferenceMentionCandidate;
}

/** A row that only tells something (e.g. the server's error); accepting it does nothing. */
export interface MessageQuickPickItem {
  label: string;
  alwaysShow: true;
  candidate?: undefined;
}

/** Any row of the session picker. */
export type SessionPickerItem = CandidateQuickPickItem | MessageQuickPickItem;

/** The row shown instead of candidates when the server's answer failed. */
export function errorQuickPickItem(description: string): MessageQuickPickItem {
  return { label: `$(error) ${escapeThemeIcons(description)}`, alwaysShow: true };
}

/** The quick-pick rows for the server's candidates, in the server's order. */
export function candidateQuickPickItems(
  candidates: readonly SessionReferenceMentionCandidate[],
  now: number,
): CandidateQuickPickItem[] {
  return candidates.map((candidate) => ({
    label: escapeThemeIcons(displaySafeLabel(candidate.label, candidate.sessionId)),
    description: formatAge(candidate.createdAt, now),
    detail: candidate.cwd !== undefined ? escapeThemeIcons(displaySafeText(candidate.cwd)) : '(no cwd)',
    alwaysShow: true,
    candidate,
  }));
}

/**
 * The mention to insert for a candidate: the canonical mention of its display-safe label, as
 * completion inserts it (the id identifies the session; a label must not smuggle controls or bidi
 * overrides into the user's text). Equal to the server's `mention` whenever the label is safe.
 */
export function mentionToInsert(candidate: Pick<SessionReferenceMentionCandidate, 'sessionId' | 'label'>): string {
  return formatSessionReferenceMention({
    sessionId: candidate.sessionId,
    label: escapeThemeIcons(displaySafeLabel(candidate.label, candidate.sessionId)),
  });
}

/**
 * Keep only well-formed candidates from a server answer (the server is another process; a bad row
 * is dropped rather than breaking the picker).
 */
export function parseCandidates(result: unknown): SessionCommandResult<typeof SessionCommands.candidates> {
  return Array.isArray(result) ? result.filter(isCandidate) : [];
}

function isCandidate(row: unknown): row is SessionReferenceMentionCandidate {
  if (typeof row !== 'object' || row === null) return false;
  const fields = row as Record<string, unknown>;
  return (
    typeof fields.sessionId === 'string' &&
    typeof fields.label === 'string' &&
    typeof fields.createdAt === 'number' &&
    typeof fields.mention === 'string' &&
    (fields.cwd === undefined || typeof fields.cwd === 'string')
  );
}
