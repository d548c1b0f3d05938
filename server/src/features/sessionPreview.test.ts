import { describe, expect, it } from 'vitest';
import { MarkupKind, type CompletionItem, type MarkupContent } from 'vscode-languageserver-types';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import { provideSessionCompletion } from './completion';
import { escapeMarkdownText, previewKindFor, resolveSessionCompletionItem, trimForPreview } from './sessionPreview';
import { openDocument, testWorkspace } from '../testing/testWorkspace';

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
    expect(value).toContain('cwd: \\/home\\/sam\\/weather');
    expect(value).toContain('created: 2026-01-07 00:00 UTC (3 days ago)');
    // The checkpoint replaced the first exchange: 5 projected messages.
    expect(value).toContain('5 messages: 2 prompts, 2 answers, 1 compaction summary');
    expect(value).toContain('**First exchange**\n\n> **Summary of earlier messages:** Summary of the early work\n\n**Latest exchange**');
    expect(value).toContain('**Latest exchange**');
    expect(value).toContain('…');
    // Everything else of the item is kept.
    expect({ ...resolved, documentation: undefined }).toEqual({ ...item, documentation: undefined });
  });

  it('escapes session text so it cannot open links, autolinks, HTML or command URIs', async () => {
    const { resolved } = await resolvedItem();
    const value = (resolved.documentation as MarkupContent).value;
    expect(value).not.toContain('[click]');
    expect(value).not.toContain('](command:');
    // No `<`, `[` or `(` of the session text is left unescaped, so none can start markup.
    const latest = value.slice(value.indexOf('**Latest exchange**'));
    expect(latest).not.toMatch(/(^|[^\\])[<[(]/m);
    expect(value).not.toContain('https://');
    expect(value).toContain('\\[click\\]\\(command\\:workbench\\.action\\.terminal\\.new\\)');
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

describe('preview text helpers', () => {
  it('escapes every ASCII punctuation character and flattens whitespace and controls', () => {
    expect(escapeMarkdownText('a_b\n\n# c\u202e')).toBe('a\\_b \\# c');
    expect(escapeMarkdownText('`code` & <b>')).toBe('\\`code\\` \\& \\<b\\>');
  });

  it('trims to whole code points with an ellipsis', () => {
    expect(trimForPreview('😀'.repeat(5), 3)).toBe('😀😀😀…');
    expect(trimForPreview('short', 10)).toBe('short');
  });
});
