/** How a mention is inserted at one selection. */
export interface MentionInsertion {
  /** How many characters before the selection start are replaced too (0, or 1 for a lone typed `@`). */
  consumedBefore: number;
}

// dsh's token rule: an `@` starts a token at the start of a line or right after whitespace.
const LONE_AT_BEFORE_CURSOR = /(^|\s)@$/;

/**
 * How to insert a mention at a selection. A mention starts with `@`; when the user already typed a
 * lone `@` (a fresh token) right before an empty selection, the mention replaces it so the line
 * does not end up with `@@[…]`. Anything else is inserted at (or replaces) the selection as is.
 */
export function planMentionInsertion(lineTextBeforeSelection: string, selectionIsEmpty: boolean): MentionInsertion {
  if (selectionIsEmpty && LONE_AT_BEFORE_CURSOR.test(lineTextBeforeSelection)) return { consumedBefore: 1 };
  return { consumedBefore: 0 };
}
