/**
 * Credentials in what a snapshot sends, and their removal (`redactSecrets`).
 *
 * Order: redact, then budget. Each projected message is scanned whole and every credential replaced
 * with `[REDACTED:<kind>]` before the byte budget runs, so the budget measures, drops and cuts the bytes
 * really sent, and a cut can only ever split a placeholder: a credential is gone before any cut could
 * leave half of it (which no rule would recognise any more). Budgeting first would do neither.
 */
import type { ProjectedMessage } from '@dsh-session-ls/shared';
import { omissionNotice, utf8ByteLength, type RetainedSession } from './budget';
import { detectCredentials, tallyCredentials, type CredentialSpan, type CredentialTally } from './credentials';
import type { ProjectedSession } from './projection';

/** What replaces a credential of `kind` in a redacted snapshot. */
export function redactionPlaceholder(kind: string): string {
  return `[REDACTED:${kind}]`;
}

/** `text` with each span replaced by its placeholder, and the placeholders' spans in the new text. */
export function redactSpans(text: string, spans: readonly CredentialSpan[]): { text: string; placeholders: CredentialSpan[] } {
  let redacted = '';
  let from = 0;
  const placeholders: CredentialSpan[] = [];
  for (const { start, end, kind } of spans) {
    redacted += text.slice(from, start);
    const placeholder = redactionPlaceholder(kind);
    placeholders.push({ start: redacted.length, end: redacted.length + placeholder.length, kind });
    redacted += placeholder;
    from = end;
  }
  return { text: redacted + text.slice(from), placeholders };
}

/** A projection as it goes to the budget: redacted or not, and where its credentials (or their placeholders) are. */
export interface SendableProjection {
  projection: ProjectedSession;
  /** With redaction: per message, the placeholders' spans; without: undefined (nothing was scanned). */
  placeholders?: CredentialSpan[][];
}

/** A projection with every credential of every message replaced by its placeholder. */
export async function redactProjection(projection: ProjectedSession): Promise<Required<SendableProjection>> {
  const placeholders: CredentialSpan[][] = [];
  const conversation: ProjectedMessage[] = [];
  for (const { role, text } of projection.data.conversation) {
    const redacted = redactSpans(text, await detectCredentials(text));
    conversation.push({ role, text: redacted.text });
    placeholders.push(redacted.placeholders);
  }
  return { projection: { data: { ...projection.data, conversation }, checkpoints: projection.checkpoints }, placeholders };
}

// A credential longer than this that straddles a cut may go uncounted (PEM keys of 4096-bit RSA are ~3,300).
const CUT_WINDOW = 8192;
const NOTICE = /\n\[\u2026 omitted (\d+) UTF-8 bytes \u2026\]$/;

/** What of `original` a cut text keeps: `[0, head)` and `[tail, original.length)`; undefined when `sent` is not a cut of it. */
function keptRegions(original: string, sent: string): { head: number; tail: number } | undefined {
  // dsh cuts to nothing when not even the notice fits; projected texts are never empty.
  if (sent === '') return { head: 0, tail: original.length };
  const notice = NOTICE.exec(sent);
  if (notice === null) return undefined;
  const body = sent.slice(0, sent.length - notice[0].length);
  if (sent !== body + omissionNotice(Number(notice[1])) || utf8ByteLength(original) - utf8ByteLength(body) !== Number(notice[1])) return undefined;
  let head = 0;
  while (head < body.length && body.charCodeAt(head) === original.charCodeAt(head)) head++;
  let tailLength = 0;
  while (tailLength < body.length && body.charCodeAt(body.length - 1 - tailLength) === original.charCodeAt(original.length - 1 - tailLength)) tailLength++;
  // A head and tail that read alike may both extend past the cut: the kept regions only grow, so more is counted, never less.
  return { head, tail: original.length - tailLength };
}

/** The credentials of a cut message that are kept whole or in part: only the text around the kept regions is scanned. */
async function keptCredentials(original: string, head: number, tail: number, known: readonly CredentialSpan[] | undefined): Promise<CredentialSpan[]> {
  let spans: readonly CredentialSpan[];
  if (known !== undefined) spans = known;
  else if (head + CUT_WINDOW >= tail - CUT_WINDOW) spans = await detectCredentials(original);
  else {
    const from = tail - CUT_WINDOW;
    const inTail = await detectCredentials(original.slice(from));
    spans = [...(await detectCredentials(original.slice(0, head + CUT_WINDOW))), ...inTail.map((span) => ({ ...span, start: span.start + from, end: span.end + from }))];
  }
  return spans.filter((span) => span.start < head || span.end > tail);
}

/**
 * The credentials a budgeted snapshot sends, whole or in part, counted by kind: each retained message's
 * credentials, and those of a cut message that reach into its kept head or tail. With `placeholders`
 * (a redacted projection), what is counted is the placeholders, and nothing is scanned.
 */
export async function sentCredentials(sendable: SendableProjection, retained: RetainedSession): Promise<CredentialTally> {
  const originals = sendable.projection.data.conversation;
  const kinds: string[] = [];
  let next = 0;
  for (const sent of retained.data.conversation) {
    // Retained messages keep their order: each is the next original of its role that it equals or is a cut of.
    for (; next < originals.length; next++) {
      const original = originals[next]!;
      if (original.role !== sent.role) continue;
      const known = sendable.placeholders?.[next];
      if (original.text === sent.text) {
        for (const span of known ?? (await detectCredentials(sent.text))) kinds.push(span.kind);
        break;
      }
      const kept = keptRegions(original.text, sent.text);
      if (kept === undefined) continue;
      for (const span of await keptCredentials(original.text, kept.head, kept.tail, known)) kinds.push(span.kind);
      break;
    }
    next++;
  }
  return tallyCredentials(kinds);
}
