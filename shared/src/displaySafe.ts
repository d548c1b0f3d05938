// C0/C1 controls and DEL, and the bidi controls lsp-contract.md names.
const LINE_LIKE_CONTROLS = /[\t\n\v\f\r]/g;
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Make session-provided text safe to show in a UI: tab/CR/LF/VT/FF become a space, other
 * C0/C1 controls, DEL and bidi controls are removed.
 */
export function displaySafeText(text: string): string {
  return text.replace(LINE_LIKE_CONTROLS, ' ').replace(UNSAFE_CHARACTERS, '');
}

/**
 * A display-safe label; when nothing is left, the session id (itself made display-safe), and when
 * the id too is nothing but removed characters, the id with each of them shown as a `\uXXXX` escape.
 */
export function displaySafeLabel(label: string, sessionId: string): string {
  const safe = displaySafeText(label);
  if (safe !== '') return safe;
  const safeId = displaySafeText(sessionId);
  // An empty label is no label at all in a completion list or a picker.
  if (safeId !== '' || sessionId === '') return safeId;
  return sessionId.replace(UNSAFE_CHARACTERS, (ch) => '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0'));
}
