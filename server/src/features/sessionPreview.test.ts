import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displaySafeText } from '@dsh-session-ls/shared';
import { MarkupKind, type CompletionItem, type MarkupContent } from 'vscode-languageserver-types';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import { provideSessionCompletion } from './completion';
import { escapeMarkdownText, previewKindFor, resolveSessionCompletionItem, trimForPreview } from './sessionPreview';
import { openDocument, testWorkspace } from '../testing/testWorkspace';
import { markdownStructure, markdownTokens, renderedText } from '../../../test/support/commonMark';

const NOW = Date.UTC(2026, 0, 10);

function longConversation() {
  const log = new SessionLogBuilder();
  const u1 = log.user('How do I add an hourly forecast?');
  log.assistant('Add a route.');
  log.checkpoint('Summary of the early work', u1, u1 + 1);
  log.user('Now cache it');
  log.assistant('Use an LRU cache.');
  log.user('And the tests? [click](command:workbench.action.terminal.new) <img src=x onerror=alert(1)> https://evil.example');
  log.assistant('x'.repeat(1000));
  log.title('Forecast *work*');
  return { header: { id: 'forecast', cwd: '/home/sam/weather', createdAt: NOW - 3 * 86_400_000 }, events: log.events() };
}

async function resolvedItem(sessions = [longConversation()]) {
  const document = openDocument('file:///home/sam/weather/p.md', '@');
  const { workspace, store } = testWorkspace(sessions, { documents: [document], now: NOW });
  const list = await provideSessionCompletion(document, { line: 0, character: 1 }, workspace);
  const item = list.items[0]!;
  return { item, resolved: await resolveSessionCompletionItem(item, workspace), workspace, store };
}

describe('completionItem/resolve', () => {
  it('adds a Markdown preview: title, cwd, created, counts, first and latest exchange', async () => {
    const { item, resolved } = await resolvedItem();
    const documentation = resolved.documentation as MarkupContent;
    expect(documentation.kind).toBe(MarkupKind.Markdown);
    const value = documentation.value;
    expect(value).toContain('**Forecast \\*work\\***');
    expect(value).toContain('cwd: /home/sam/weather\n');
    expect(value).toContain('created: 2026-01-07 00:00 UTC (3 days ago)');
    // The checkpoint replaced the first exchange: 5 projected messages.
    expect(value).toContain('5 messages: 2 prompts, 2 answers, 1 compaction summary');
    expect(value).toContain('**First exchange**\n\n> **Summary of earlier messages:** Summary of the early work\n\n**Latest exchange**');
    expect(value).toContain('**Latest exchange**');
    expect(value).toContain('…');
    // Everything else of the item is kept.
    expect({ ...resolved, documentation: undefined }).toEqual({ ...item, documentation: undefined });
  });

  it('escapes session text so it cannot open links, autolinks, HTML or command URIs, and shows it as written', async () => {
    const { resolved } = await resolvedItem();
    const value = (resolved.documentation as MarkupContent).value;
    expect(value).toContain('\\[click](command:workbench.action.terminal.new) \\<img src=x onerror=alert(1)> https:/\\/evil.example');
    const tokens = markdownTokens(value);
    expect(tokens.filter((token) => ['link_open', 'image', 'html_inline', 'html_block'].includes(token.type))).toEqual([]);
    expect(renderedText(tokens)).toContain('And the tests? [click](command:workbench.action.terminal.new) <img src=x onerror=alert(1)> https://evil.example');
  });

  it('says so when the session cannot be read, and leaves other items alone', async () => {
    const document = openDocument('file:///p.md', '@');
    const { workspace, store } = testWorkspace([longConversation()], { documents: [document], now: NOW });
    const [item] = (await provideSessionCompletion(document, { line: 0, character: 1 }, workspace)).items;
    store.failRead('forecast');
    const value = ((await resolveSessionCompletionItem(item!, workspace)).documentation as MarkupContent).value;
    expect(value).toContain('cannot be read');
    const plain: CompletionItem = { label: 'x', data: { kind: 'file' } };
    expect(await resolveSessionCompletionItem(plain, workspace)).toBe(plain);
  });
});

describe('plain-text previews', () => {
  it('writes plain text, unescaped but display-safe, for clients without Markdown', async () => {
    const document = openDocument('file:///p.md', '@');
    const { workspace } = testWorkspace([longConversation()], { documents: [document], now: NOW });
    const [item] = (await provideSessionCompletion(document, { line: 0, character: 1 }, workspace)).items;
    const documentation = (await resolveSessionCompletionItem(item!, workspace, undefined, MarkupKind.PlainText)).documentation as MarkupContent;
    expect(documentation.kind).toBe(MarkupKind.PlainText);
    expect(documentation.value.split('\n').slice(0, 3)).toEqual(['Forecast *work*', '', '- cwd: /home/sam/weather']);
    expect(documentation.value).toContain('  User: And the tests? [click](command:workbench.action.terminal.new)');
  });

  it('chooses Markdown unless the client lists only other formats', () => {
    expect(previewKindFor(undefined)).toBe(MarkupKind.Markdown);
    expect(previewKindFor(['plaintext', 'markdown'])).toBe(MarkupKind.Markdown);
    expect(previewKindFor(['plaintext'])).toBe(MarkupKind.PlainText);
  });
});

describe('session text in Markdown', () => {
  // Where session text goes: hover and preview titles, list items, quoted prompts, transcript headings,
  // the model preview's table, a paragraph, and (never today, but it must hold) the start of a line.
  const CONTEXTS: ReadonlyArray<[string, (text: string) => string]> = [
    ['strong title', (text) => `**${text}**\n\n- id: a`],
    ['list item', (text) => `- cwd: ${text}\n- created: now`],
    ['quoted prompt', (text) => `**First exchange**\n\n> **User:** ${text}\n>\n> **Assistant:** ok`],
    ['heading', (text) => `# ${text}\n\n- session: a`],
    ['table cell', (text) => `| # | session | bytes |\n|---|---|---|\n| 1 | ${text} | 5 of 10 |`],
    ['paragraph', (text) => `Nothing: dsh refuses this message with CODE: ${text}`],
    ['line start', (text) => `${text}\n\nafter`],
  ];
  const PLACEHOLDER = 'QQQ';

  /** Escaped `text` in each context renders as the context does around a plain word, showing `text` itself. */
  function expectLiteral(text: string): void {
    const shown = displaySafeText(text).replace(/\s+/g, ' ').trim();
    const escaped = escapeMarkdownText(text);
    for (const [name, context] of CONTEXTS) {
      const plain = markdownTokens(context(PLACEHOLDER));
      const tokens = markdownTokens(context(escaped));
      expect(markdownStructure(tokens), `${name}: ${JSON.stringify(escaped)}`).toEqual(markdownStructure(plain));
      expect(renderedText(tokens), `${name}: ${JSON.stringify(escaped)}`).toBe(renderedText(plain).replace(PLACEHOLDER, shown));
    }
  }

  it('leaves paths, dashes, dots and everyday punctuation as they are', () => {
    for (const text of [
      '/home/sam/weather-app',
      'Fix the parser (v2.1) - done!',
      'snake_case and init_file_2 names',
      '~/notes/plan.md',
      'C:\\Users\\sam\\app',
      'C# and F# notes #2',
      'Q&A: what is "it"?',
      'email me @sam, then {braces}',
      'a ~ b',
      '1.5 million rows',
      'Hello, world. 100% done; 2+2=4',
    ]) {
      expect(escapeMarkdownText(text), text).toBe(text);
      expectLiteral(text);
    }
  });

  it('escapes what would be markup, and flattens whitespace and controls', () => {
    expect(escapeMarkdownText('a_b\n\n# c\u202e')).toBe('a_b # c');
    expect(escapeMarkdownText('`code` & <b> *em* _em_ [x](y)')).toBe('\\`code\\` & \\<b> \\*em\\* \\_em\\_ \\[x](y)');
    expect(escapeMarkdownText('# Title ##')).toBe('\\# Title \\##');
    expect(escapeMarkdownText('- item')).toBe('\\- item');
    expect(escapeMarkdownText('12) item')).toBe('12\\) item');
    expect(escapeMarkdownText('see https://evil.example or www.evil.example or sam@evil.example')).toBe(
      'see https:/\\/evil.example or www\\.evil.example or sam\\@evil.example',
    );
    expect(escapeMarkdownText('&#x202e; &amp; a|b ~~x~~ ends with \\')).toBe('\\&#x202e; \\&amp; a\\|b \\~\\~x\\~\\~ ends with \\\\');
  });

  it('keeps hostile titles literal: no link, autolink, HTML, code, emphasis, block or character reference', () => {
    for (const text of [
      '[click](command:workbench.action.terminal.new)',
      '![img](https://evil.example/x.png)',
      '[ref]: https://evil.example',
      '<img src=x onerror=alert(1)>',
      '<https://evil.example>',
      'https://evil.example/path',
      '//evil.example',
      'www.evil.example',
      'mailto:sam@evil.example',
      '```js',
      '~~~',
      '    indented code',
      '> quoted',
      '# heading',
      'Title\n===',
      '---',
      '* * *',
      '_ _ _',
      '1. first',
      '+ plus',
      '&#x202e;reversed &lt;b&gt;',
      '**bold** __bold__ *em* _em_ ~~gone~~ ~gone~',
      'a\\',
      'a\\*b\\\\c\\`',
      'cell | split | here',
      '<!-- comment -->',
      'x<span>y</span>',
      '`code` and ``more``',
      '_leading and trailing_',
      'word_ _word',
    ]) {
      expectLiteral(text);
    }
  });

  it('keeps any mix of markup characters literal (property)', () => {
    const piece = fc.constantFrom(
      ...'\\`*_[]()<>!#&;:/@.~|-+= "\'{}aw1xé\t'.split(''),
      'www.',
      'https://',
      '//',
      '&#x202e;',
      '&amp;',
      'mailto:',
      'a@b.co',
      '```',
      '~~',
      '**',
      '__',
      '](',
      '\n',
      '1.',
    );
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 16 }).map((pieces) => pieces.join('')),
        (text) => {
          fc.pre(displaySafeText(text).trim() !== '');
          expectLiteral(text);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('trims to whole code points with an ellipsis', () => {
    expect(trimForPreview('😀'.repeat(5), 3)).toBe('😀😀😀…');
    expect(trimForPreview('short', 10)).toBe('short');
  });
});
