import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SessionReferenceError,
  decodeSessionMention,
  encodeSessionReferenceUri,
  escapeMentionLabel,
  formatSessionReferenceMention,
  parseSessionReferenceText,
  scanSessionMentions,
  unescapeMentionLabel,
} from '@dsh-session-ls/shared';
import { LINE_TERMINATORS, WHITESPACE_CHARS, denseMentionText, dshParse, dshScan } from '../../test/support/dshMentionGrammar';

const DEMO_1 = 'dsh-session:ImRlbW8tMSI';
const DEMO_2 = 'dsh-session:ImRlbW8tMiI';

/** Any JS string, lone surrogates included. */
const anyUtf16String = fc.oneof(
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 30 }).map((units) => String.fromCharCode(...units)),
  fc.string({ unit: 'binary' }),
);

/** Fragments that exercise every branch of the grammar when glued together at random. */
const INTERESTING_FRAGMENTS = [
  '@[', '@', '[', ']', '\\', '\\\\', '\\]', '](', '(', ')', '](dsh-session:', 'dsh-session:', 'dsh-session',
  'ImRlbW8tMSI', 'IiI', 'IiJ', 'InNvdXJjZSI', '%%%', '=', ' ', '\n', '\t', 'a', 'x', 'Z', '0', '-', '_', '.',
  '😀', '\ud800', '\u00a0',
];
const interestingText = fc
  .array(fc.constantFrom(...INTERESTING_FRAGMENTS), { maxLength: 40 })
  .map((fragments) => fragments.join(''));

/** Labels full of grammar characters, plus arbitrary strings. */
const interestingLabel = fc.oneof(anyUtf16String, interestingText);

function parseError(text: string): SessionReferenceError {
  try {
    parseSessionReferenceText(text);
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReferenceError);
    return error as SessionReferenceError;
  }
  throw new Error(`expected ${JSON.stringify(text)} to fail`);
}

describe('mention labels', () => {
  it.each([
    ['plain', 'plain'],
    ['a\\b', 'a\\\\b'],
    ['a]b', 'a\\]b'],
    ['\\]', '\\\\\\]'],
    ['[x](y) @[z] `q` *e* \n', '[x\\](y) @[z\\] `q` *e* \n'],
    ['', ''],
  ])('escape %j as %j (only \\ and ] are escaped)', (label, escaped) => {
    expect(escapeMentionLabel(label)).toBe(escaped);
  });

  it('escaping changes nothing but \\ and ], and unescaping inverts it', () => {
    fc.assert(
      fc.property(interestingLabel, (label) => {
        const escaped = escapeMentionLabel(label);
        expect(escaped.replace(/\\([\\\]])/g, '$1')).toBe(label);
        expect(escaped.length - label.length).toBe((label.match(/[\\\]]/g) ?? []).length);
        expect(unescapeMentionLabel(escaped)).toBe(label);
      }),
    );
  });

  it.each([
    ['\\a', 'a'],
    ['\\\\', '\\'],
    ['\\]', ']'],
    ['\\[', '['],
    ['\\\n', '\n'],
    ['\\\ud800', '\ud800'],
    ['a\\\\\\]b', 'a\\]b'],
  ])('unescape turns \\X into X for any X: %j → %j', (raw, label) => {
    expect(unescapeMentionLabel(raw)).toBe(label);
  });
});

describe('formatSessionReferenceMention', () => {
  it('defaults the label to the session id', () => {
    expect(formatSessionReferenceMention({ sessionId: 'demo-2' })).toBe(`@[demo-2](${DEMO_2})`);
    expect(formatSessionReferenceMention({ sessionId: 'a]b' })).toBe(`@[a\\]b](${encodeSessionReferenceUri('a]b')})`);
  });

  it('writes dsh’s canonical mention for a labelled source', () => {
    expect(formatSessionReferenceMention({ sessionId: 'demo-1', label: 'Say hi' })).toBe(`@[Say hi](${DEMO_1})`);
    expect(formatSessionReferenceMention({ sessionId: 'demo-2', label: 'Alpha file check' })).toBe(
      '@[Alpha file check](dsh-session:ImRlbW8tMiI)',
    );
  });

  it('keeps control and bidi characters of a label unchanged (only \\ and ] are escaped)', () => {
    expect(formatSessionReferenceMention({ sessionId: 'demo-4-mixed', label: 'Compare\u0007 with \u202eSay hi\u202c' })).toBe(
      '@[Compare\u0007 with \u202eSay hi\u202c](dsh-session:ImRlbW8tNC1taXhlZCI)',
    );
  });

  it.each([
    ['null', null],
    ['a string', 'demo-1'],
    ['a missing sessionId', {}],
    ['a numeric sessionId', { sessionId: 1 }],
    ['a numeric label', { sessionId: 'a', label: 1 }],
  ])('rejects %s with INVALID_REFERENCE', (_what, reference) => {
    expect(() => formatSessionReferenceMention(reference as never)).toThrow(
      expect.objectContaining({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' }),
    );
  });

  it('parses back to the same id and label, with text @ + label (any id, any label)', () => {
    fc.assert(
      fc.property(anyUtf16String, fc.option(interestingLabel, { nil: undefined }), (sessionId, label) => {
        const mention = formatSessionReferenceMention(label === undefined ? { sessionId } : { sessionId, label });
        const expectedLabel = label ?? sessionId;
        expect(parseSessionReferenceText(mention)).toEqual({
          text: '@' + expectedLabel,
          references: [{ sessionId, label: expectedLabel }],
        });
      }),
      { numRuns: 2000 },
    );
  });

  it('several mentions in plain text parse back in order, duplicates kept', () => {
    // Surrounding text may not open a label (`[`) or start a bare URI (`d`), or it would join the grammar.
    const plain = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '.', ',', '(', ')', ']', '\\', '@', '😀'), maxLength: 6 });
    const reference = fc.record({ sessionId: fc.constantFrom('demo-1', 'x]y', '', '\ud800'), label: interestingLabel });
    fc.assert(
      fc.property(fc.array(fc.tuple(plain, reference), { maxLength: 5 }), plain, (parts, tail) => {
        const text = parts.map(([before, ref]) => before + formatSessionReferenceMention(ref)).join('') + tail;
        expect(parseSessionReferenceText(text)).toEqual({
          text: parts.map(([before, ref]) => before + '@' + ref.label).join('') + tail,
          references: parts.map(([, ref]) => ref),
        });
      }),
      { numRuns: 1000 },
    );
  });
});

describe('parseSessionReferenceText', () => {
  it('parses dsh’s fixture example', () => {
    expect(parseSessionReferenceText(`see @[Say hi](${DEMO_1}) and ${DEMO_2}.`)).toEqual({
      text: 'see @Say hi and @demo-2.',
      references: [
        { sessionId: 'demo-1', label: 'Say hi' },
        { sessionId: 'demo-2', label: 'demo-2' },
      ],
    });
  });

  it('fails dsh’s broken fixture example with its exact message', () => {
    const error = parseError('broken @[x](dsh-session:IiJ)');
    expect(error.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
    expect(error.message).toBe('invalid session reference URI "dsh-session:IiJ"');
  });

  it('leaves text without mentions unchanged', () => {
    expect(parseSessionReferenceText('plain @user text [x](y) dsh-session')).toEqual({
      text: 'plain @user text [x](y) dsh-session',
      references: [],
    });
    expect(parseSessionReferenceText('')).toEqual({ text: '', references: [] });
  });

  it('replaces an explicit mention by @ + the unescaped label', () => {
    expect(parseSessionReferenceText(`@[a\\]b\\\\c\\d](${DEMO_1})!`)).toEqual({
      text: '@a]b\\cd!',
      references: [{ sessionId: 'demo-1', label: 'a]b\\cd' }],
    });
  });

  it('keeps an empty explicit label empty', () => {
    expect(parseSessionReferenceText(`[@[](${DEMO_1})]`)).toEqual({
      text: '[@]',
      references: [{ sessionId: 'demo-1', label: '' }],
    });
  });

  it('replaces a bare URI by @ + the session id', () => {
    expect(parseSessionReferenceText(`(${DEMO_2})`)).toEqual({
      text: '(@demo-2)',
      references: [{ sessionId: 'demo-2', label: 'demo-2' }],
    });
  });

  it('keeps references in appearance order, duplicates included', () => {
    expect(parseSessionReferenceText(`${DEMO_2} @[one](${DEMO_1}) @[two](${DEMO_1}) ${DEMO_2}`)).toEqual({
      text: '@demo-2 @one @two @demo-2',
      references: [
        { sessionId: 'demo-2', label: 'demo-2' },
        { sessionId: 'demo-1', label: 'one' },
        { sessionId: 'demo-1', label: 'two' },
        { sessionId: 'demo-2', label: 'demo-2' },
      ],
    });
  });

  it('lets a label span lines and contain anything escaped', () => {
    expect(parseSessionReferenceText(`@[line1\nline2 \\] (x) @[y dsh-session:IiJ](${DEMO_1})`)).toEqual({
      text: '@line1\nline2 ] (x) @[y dsh-session:IiJ',
      references: [{ sessionId: 'demo-1', label: 'line1\nline2 ] (x) @[y dsh-session:IiJ' }],
    });
  });

  it('takes an earlier unclosed @[ as the start of the label', () => {
    expect(parseSessionReferenceText(`@[a @[b](${DEMO_1})`)).toEqual({
      text: '@a @[b',
      references: [{ sessionId: 'demo-1', label: 'a @[b' }],
    });
  });

  it('treats dsh-session: followed by a space, by %%% or by nothing as plain text', () => {
    for (const text of ['dsh-session: x', 'see dsh-session:%%%', 'end dsh-session:', 'dsh-session:\nIiI']) {
      expect(parseSessionReferenceText(text)).toEqual({ text, references: [] });
    }
  });

  it('has no left word boundary: a bare URI inside a URL is rewritten', () => {
    expect(parseSessionReferenceText(`https://x/${DEMO_2}`)).toEqual({
      text: 'https://x/@demo-2',
      references: [{ sessionId: 'demo-2', label: 'demo-2' }],
    });
    expect(parseSessionReferenceText(`abc${DEMO_2}`).text).toBe('abc@demo-2');
  });

  it.each(['x', 'Z', '7', '-', '_'])('fails a bare URI glued on the right to %j', (glued) => {
    const uri = DEMO_2 + glued;
    const error = parseError(`see ${uri} now`);
    expect(error.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
    expect(error.message).toBe(`invalid session reference URI ${JSON.stringify(uri)}`);
  });

  it.each(['.', ',', ')', ']', ' ', '=', '/', 'é'])('ends a bare URI at %j', (after) => {
    expect(parseSessionReferenceText(DEMO_2 + after).text).toBe('@demo-2' + after);
  });

  it('fails the whole text on an explicit mention with a bad URI, naming the first bad one', () => {
    for (const [text, uri] of [
      [`ok ${DEMO_1} @[x](dsh-session:%%%) ${DEMO_2}`, 'dsh-session:%%%'],
      [`@[x](dsh-session:IiI=) @[y](dsh-session:IiJ)`, 'dsh-session:IiI='],
      [`@[x](dsh-session:InNvdXJjZSI(x)`, 'dsh-session:InNvdXJjZSI(x'],
    ] as const) {
      const error = parseError(text);
      expect(error.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
      expect(error.message).toBe(`invalid session reference URI ${JSON.stringify(uri)}`);
    }
  });

  it('fails the whole text on a non-canonical bare candidate', () => {
    const error = parseError(`@[fine](${DEMO_1}) and dsh-session:IiJ`);
    expect(error.message).toBe('invalid session reference URI "dsh-session:IiJ"');
  });

  it('falls back to the bare form when the explicit form does not close', () => {
    // Whitespace ends the URI run, so there is no explicit mention; the bare URI inside still counts.
    expect(parseSessionReferenceText(`@[x](${DEMO_2} )`)).toEqual({
      text: '@[x](@demo-2 )',
      references: [{ sessionId: 'demo-2', label: 'demo-2' }],
    });
    expect(parseSessionReferenceText(`@[x](${DEMO_2}`).text).toBe('@[x](@demo-2');
  });

  it('needs the exact scheme inside an explicit mention', () => {
    for (const text of ['@[x](DSH-SESSION:IiI)', '@[x](https://a/b)', '@[x] (dsh-session:IiI)']) {
      expect(() => parseSessionReferenceText(text)).not.toThrow();
    }
    expect(parseSessionReferenceText('@[x](DSH-SESSION:IiI)')).toEqual({ text: '@[x](DSH-SESSION:IiI)', references: [] });
    // The space breaks the explicit form; the bare URI after it is still a mention.
    expect(parseSessionReferenceText('@[x] (dsh-session:IiI)').text).toBe('@[x] (@)');
  });

  it('takes @[x](dsh-session:) as an explicit mention with an empty payload, failing the whole text', () => {
    // dsh's URI group is `dsh-session:[^\s)]*`: zero characters are enough.
    for (const text of ['@[x](dsh-session:)', `${DEMO_1} @[](dsh-session:) ${DEMO_2}`, '@[a\\]b](dsh-session:)']) {
      const error = parseError(text);
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'SESSION_REFERENCE_INVALID_REFERENCE',
        message: 'invalid session reference URI "dsh-session:"',
      });
    }
    expect([...scanSessionMentions('see @[x](dsh-session:).')]).toEqual([
      { kind: 'explicit', start: 4, end: 22, uri: 'dsh-session:', uriStart: 9, label: 'x' },
    ]);
  });

  it.each(LINE_TERMINATORS.map((lt) => [`U+${lt.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`, lt]))(
    'does not let a backslash escape the line terminator %s: no explicit mention, the bare URI inside still counts',
    (_name, lt) => {
      const text = `@[a\\${lt}b](${DEMO_1})`;
      expect([...scanSessionMentions(text)]).toEqual([{ kind: 'bare', start: text.indexOf(DEMO_1), end: text.length - 1, uri: DEMO_1, uriStart: text.indexOf(DEMO_1) }]);
      expect(parseSessionReferenceText(text)).toEqual({ text: `@[a\\${lt}b](@demo-1)`, references: [{ sessionId: 'demo-1', label: 'demo-1' }] });
      // Unescaped, or after an escaped backslash, the line terminator is an ordinary label character.
      expect(parseSessionReferenceText(`@[a${lt}b](${DEMO_1})`).references).toEqual([{ sessionId: 'demo-1', label: `a${lt}b` }]);
      expect(parseSessionReferenceText(`@[a\\\\${lt}b](${DEMO_1})`).references).toEqual([{ sessionId: 'demo-1', label: `a\\${lt}b` }]);
    },
  );

  it('ends the label at a backslash with nothing after it', () => {
    expect([...scanSessionMentions('@[a\\')]).toEqual([]);
  });

  it.each(WHITESPACE_CHARS.map((ws) => [`U+${ws.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`, ws]))(
    'ends an explicit URI at the white space %s (\\s under u), leaving the bare URI',
    (_name, ws) => {
      const text = `@[x](${DEMO_1}${ws})`;
      expect(parseSessionReferenceText(text)).toEqual({ text: `@[x](@demo-1${ws})`, references: [{ sessionId: 'demo-1', label: 'demo-1' }] });
      // Right after the scheme it leaves plain text: an empty run followed by white space is no mention.
      expect(parseSessionReferenceText(`@[x](dsh-session:${ws})`)).toEqual({ text: `@[x](dsh-session:${ws})`, references: [] });
    },
  );

  it('knows the white space of \\s under u, and what is not white space', () => {
    for (const ws of ['\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\u1680', '\u2000', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff']) {
      expect(WHITESPACE_CHARS).toContain(ws);
    }
    // Not white space: inside the explicit URI run, so the (bad) URI reaches the `)`.
    for (const other of ['\u200b', '\u180e', '\u0085']) {
      expect(WHITESPACE_CHARS).not.toContain(other);
      expect(parseError(`@[x](dsh-session:${other})`).message).toBe(`invalid session reference URI ${JSON.stringify('dsh-session:' + other)}`);
    }
  });

  it('rejects a non-string text with INVALID_REFERENCE', () => {
    expect(() => parseSessionReferenceText(undefined as unknown as string)).toThrow(
      expect.objectContaining({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' }),
    );
  });

  /** Our parse gives dsh's result, or fails with dsh's first error (code and message). */
  const expectDshParse = (text: string) => {
    let expected: ReturnType<typeof dshParse> | SessionReferenceError;
    try {
      expected = dshParse(text);
    } catch (error) {
      expected = error as SessionReferenceError;
    }
    if (expected instanceof SessionReferenceError) {
      const error = parseError(text);
      expect({ code: error.code, message: error.message }).toEqual({ code: expected.code, message: expected.message });
    } else {
      expect(parseSessionReferenceText(text)).toEqual(expected);
    }
  };

  it('agrees with dsh’s expression on random texts (result or first error)', () => {
    fc.assert(fc.property(interestingText, expectDshParse), { numRuns: 3000 });
  });

  it('agrees with dsh’s expression on texts dense in \\, line terminators, \\s, brackets, @ and dsh-session:', () => {
    fc.assert(fc.property(denseMentionText(), expectDshParse), { numRuns: 5000 });
  });
});

describe('scanSessionMentions', () => {
  it('reports UTF-16 offsets of each token and its URI', () => {
    const text = `😀 see @[Say hi](${DEMO_1}) and ${DEMO_2}.`;
    const explicitStart = text.indexOf('@[');
    const bareStart = text.lastIndexOf('dsh-session:');
    expect([...scanSessionMentions(text)]).toEqual([
      {
        kind: 'explicit',
        start: explicitStart,
        end: text.indexOf(')') + 1,
        uri: DEMO_1,
        uriStart: text.indexOf(DEMO_1),
        label: 'Say hi',
      },
      { kind: 'bare', start: bareStart, end: bareStart + DEMO_2.length, uri: DEMO_2, uriStart: bareStart },
    ]);
    expect(explicitStart).toBe(7); // the emoji counts as two code units
  });

  it('finds grammar matches whatever their URI, leaving decoding to the caller', () => {
    const tokens = [...scanSessionMentions('@[x](dsh-session:%%%) dsh-session:IiJ')];
    expect(tokens.map((t) => t.uri)).toEqual(['dsh-session:%%%', 'dsh-session:IiJ']);
  });

  it('finds dsh’s matches, spans included, on random texts', () => {
    fc.assert(
      fc.property(interestingText, (text) => {
        expect([...scanSessionMentions(text)]).toEqual(dshScan(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('finds dsh’s matches, spans included, on texts dense in \\, line terminators, \\s, brackets, @ and dsh-session:', () => {
    fc.assert(
      fc.property(denseMentionText(), (text) => {
        expect([...scanSessionMentions(text)]).toEqual(dshScan(text));
      }),
      { numRuns: 10000 },
    );
  });

  it('finds dsh’s matches on arbitrary strings around mentions', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(anyUtf16String, interestingText, denseMentionText(8), fc.constant(`@[a](${DEMO_1})`)), { maxLength: 6 }),
        (parts) => {
          const text = parts.join('');
          expect([...scanSessionMentions(text)]).toEqual(dshScan(text));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('decodeSessionMention', () => {
  it('adds the session id of a good token', () => {
    const [token] = [...scanSessionMentions(`@[Say hi](${DEMO_1})`)];
    expect(decodeSessionMention(token!)).toEqual({ ...token, sessionId: 'demo-1' });
  });

  it('keeps the error of a bad token instead of throwing', () => {
    const [token] = [...scanSessionMentions('broken @[x](dsh-session:IiJ)')];
    const decoded = decodeSessionMention(token!);
    expect(decoded.sessionId).toBeUndefined();
    expect(decoded.error).toBeInstanceOf(SessionReferenceError);
    expect(decoded.error).toMatchObject({
      code: 'SESSION_REFERENCE_INVALID_REFERENCE',
      message: 'invalid session reference URI "dsh-session:IiJ"',
    });
  });
});

// Functional checks that the scan stays linear: a quadratic regression would run into the test timeout.
describe('scanSessionMentions on adversarial input finishes', () => {
  const MB = 1_000_000;

  it('a megabyte of @[ with no ]', () => {
    const text = '@['.repeat(MB / 2);
    expect([...scanSessionMentions(text)]).toEqual([]);
    expect(parseSessionReferenceText(text).text).toBe(text);
  });

  it('a megabyte of @[ labels that a backslash before a line break stops', () => {
    const text = '@[ab'.repeat(MB / 4) + '\\\n](dsh-session:IiI)';
    const tokens = [...scanSessionMentions(text)];
    const bare = text.lastIndexOf('dsh-session:');
    expect(tokens).toEqual([{ kind: 'bare', start: bare, end: text.length - 1, uri: 'dsh-session:IiI', uriStart: bare }]);
  });

  it('a megabyte of escaped ] after one @[', () => {
    const text = '@[' + '\\]'.repeat(MB / 2);
    expect([...scanSessionMentions(text)]).toEqual([]);
  });

  it('@[x](dsh-session: followed by a megabyte of non-space characters without )', () => {
    const text = '@[x](dsh-session:' + 'a'.repeat(MB);
    const tokens = [...scanSessionMentions(text)];
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({ kind: 'bare', start: 5, end: text.length });
    expect(parseError(text).code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
  });

  it('repeated @[ before one ](dsh-session:aaaa…', () => {
    const text = '@['.repeat(MB / 4) + '](dsh-session:' + 'a'.repeat(MB / 2);
    const tokens = [...scanSessionMentions(text)];
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({ kind: 'bare', start: MB / 2 + 2, end: text.length });
  });

  it('many unclosed explicit mentions whose URI runs overlap', () => {
    // Each `@[](dsh-session:x` opens a URI run reaching the end of the text (no space, no `)`).
    const unit = '@[](dsh-session:x';
    const count = Math.floor(MB / unit.length);
    const tokens = [...scanSessionMentions(unit.repeat(count))];
    expect(tokens).toHaveLength(count);
    expect(tokens.every((t) => t.kind === 'bare' && t.uri === 'dsh-session:x')).toBe(true);
  });

  it('many bare URI prefixes glued together', () => {
    const text = 'dsh-session:'.repeat(MB / 12);
    const tokens = [...scanSessionMentions(text)];
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens[0]).toMatchObject({ kind: 'bare', start: 0, uri: 'dsh-session:dsh-session' });
  });
});
