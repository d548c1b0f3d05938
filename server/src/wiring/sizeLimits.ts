/**
 * How big a document and a message may be. A prompt or Markdown file is kilobytes to a few MB: the
 * largest context a model takes (about a million tokens) is about 4 MB of text, and the biggest
 * Markdown files in common use (generated references, long changelogs) stay under ~10 MB. A document
 * past these limits is no prompt; held and analysed it would cost the server hundreds of MB and
 * seconds per keystroke (a 300 MB one took 13.3 s for one completion, and one over V8's string
 * limit, ~512 MB, cannot even be parsed), so it is refused with a message to the user instead.
 */

/**
 * The longest document the server keeps, in UTF-16 code units (the protocol's, and what a
 * document's length costs in memory): 32 Mi, 8 times the largest prompt a model takes.
 */
export const MAX_DOCUMENT_LENGTH = 32 * 1024 * 1024;

/**
 * The longest message body the framing lets through, in bytes: twice the document limit, since a
 * `didOpen` carries its document JSON-escaped (a newline or quote is two bytes, a CJK character
 * three). A longer body is never buffered: its bytes are dropped as they stream in, and the
 * message {@link MESSAGE_TOO_LARGE} stands for it (framing.ts).
 */
export const MAX_MESSAGE_BYTES = 2 * MAX_DOCUMENT_LENGTH;

/**
 * The message the framing puts in place of one it did not read (too long): a request with the
 * unread one's id when its start gave one (answered with an error), else a notification. Its
 * params are {@link MessageTooLargeParams}.
 */
export const MESSAGE_TOO_LARGE = 'dshSession/messageTooLarge';

/** What the framing could tell of a message it did not read, from its first bytes. */
export interface MessageTooLargeParams {
  /** Its declared `Content-Length`. */
  length: number;
  /** {@link MAX_MESSAGE_BYTES} at the time. */
  limit: number;
  method?: string;
  /** `params.textDocument.uri` (a `didOpen` or `didChange`). */
  uri?: string;
}
