import type { TextPosition } from './types';

/** The position of a UTF-16 offset in a text, lines broken by \n, \r\n or \r (as LSP breaks them). */
export function positionAt(text: string, offset: number = text.length): TextPosition {
  const end = Math.max(0, Math.min(offset, text.length));
  let line = 0;
  let lineStart = 0;
  for (let index = 0; index < end; index++) {
    const char = text.charCodeAt(index);
    if (char === 10 || char === 13) {
      if (char === 13 && text.charCodeAt(index + 1) === 10) {
        // An offset between \r and \n is the end of the line.
        if (index + 1 === end) return { line, character: index - lineStart };
        index++;
      }
      line++;
      lineStart = index + 1;
    }
  }
  return { line, character: end - lineStart };
}

/** The UTF-16 offset of a position in a text (the inverse of `positionAt`). */
export function offsetAt(text: string, position: TextPosition): number {
  let line = 0;
  let index = 0;
  while (line < position.line && index < text.length) {
    const char = text.charCodeAt(index++);
    if (char === 13 && text.charCodeAt(index) === 10) index++;
    if (char === 10 || char === 13) line++;
  }
  return Math.min(index + position.character, text.length);
}
