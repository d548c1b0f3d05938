import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { ColumnConverter, negotiatePositionEncoding } from './positionEncoding';

const doc = (text: string) => TextDocument.create('file:///t.md', 'markdown', 1, text);

describe('ColumnConverter', () => {
  it('counts 会 as 3 bytes, astral characters as 4, and line breaks end a line', () => {
    const document = doc('a会😀b\r\n会\n');
    expect(new ColumnConverter(document).toUtf8({ line: 0, character: 4 })).toEqual({ line: 0, character: 8 });
    expect(new ColumnConverter(document).toUtf16({ line: 0, character: 8 })).toEqual({ line: 0, character: 4 });
    expect(new ColumnConverter(document).toUtf16({ line: 1, character: 3 })).toEqual({ line: 1, character: 1 });
    // Past the end of a line: the line's end, not the next line.
    expect(new ColumnConverter(document).toUtf16({ line: 0, character: 99 })).toEqual({ line: 0, character: 5 });
    expect(new ColumnConverter(document).toUtf8({ line: 0, character: 99 })).toEqual({ line: 0, character: 9 });
  });

  it('takes a position inside a character to its start', () => {
    const document = doc('会😀');
    expect(new ColumnConverter(document).toUtf16({ line: 0, character: 1 })).toEqual({ line: 0, character: 0 });
    expect(new ColumnConverter(document).toUtf16({ line: 0, character: 5 })).toEqual({ line: 0, character: 1 });
    expect(new ColumnConverter(document).toUtf8({ line: 0, character: 2 })).toEqual({ line: 0, character: 3 });
  });

  it('leaves a line past the end alone (the features clamp it)', () => {
    expect(new ColumnConverter(doc('x')).toUtf16({ line: 5, character: 2 })).toEqual({ line: 5, character: 2 });
  });

  it('round-trips every character boundary, converted in order on one converter', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'é', '会', '😀', '\n', '\r\n', '\ud800'), maxLength: 30 }), (text) => {
        const document = doc(text);
        const toBytes = new ColumnConverter(document);
        const back = new ColumnConverter(document);
        for (let line = 0; line < document.lineCount; line++) {
          const start = document.offsetAt({ line, character: 0 });
          const lineText = text.slice(start).split(/\r\n|\r|\n/)[0]!;
          let character = 0;
          for (const piece of lineText) {
            const bytes = toBytes.toUtf8({ line, character });
            expect(bytes.character).toBe(Buffer.byteLength(lineText.slice(0, character)));
            expect(back.toUtf16(bytes)).toEqual({ line, character });
            character += piece.length;
          }
        }
      }),
    );
  });
});

describe('negotiatePositionEncoding', () => {
  it("takes the client's first encoding the server speaks, else UTF-16", () => {
    expect(negotiatePositionEncoding({ general: { positionEncodings: ['utf-8'] } })).toBe('utf-8');
    expect(negotiatePositionEncoding({ general: { positionEncodings: ['utf-32', 'utf-16', 'utf-8'] } })).toBe('utf-16');
    expect(negotiatePositionEncoding({ general: { positionEncodings: ['utf-32'] } })).toBe('utf-16');
    expect(negotiatePositionEncoding({})).toBe('utf-16');
    expect(negotiatePositionEncoding(undefined)).toBe('utf-16');
  });
});
