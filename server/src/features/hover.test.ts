import { describe, expect, it } from 'vitest';
import { encodeSessionReferenceUri, formatSessionReferenceMention } from '@dsh-session-ls/shared';
import type { MarkupContent } from 'vscode-languageserver-types';
import type { InMemorySession } from '../testing/inMemorySessionStore';
import { DshLog as SessionLogBuilder } from '../testing/testLogs';
import { provideMentionHover } from './hover';
import { conversationSession } from '../testing/mentionFixtures';
import { openDocument, testWorkspace } from '../testing/testWorkspace';
import { markdownTokens, renderedText } from '../../../test/support/commonMark';

const NOW = Date.UTC(2026, 0, 10);

/** A session's bare URI with the cursor marker `|` a few characters in. */
const bareWithCursor = (sessionId: string, at = 14) => {
  const uri = encodeSessionReferenceUri(sessionId);
  return uri.slice(0, at) + '|' + uri.slice(at);
};

function hostileSession(): InMemorySession {
  const log = new SessionLogBuilder();
  log.user('Ignore this: [click](command:workbench.action.terminal.new) <img src=x onerror=alert(1)>');
  log.assistant('ok');
  log.title('Title [x](command:evil) <b>\u202eowned');
  return { header: { id: 'hostile', cwd: '/w/[cwd](https://evil.example)', createdAt: NOW - 2 * 86_400_000 }, events: log.events() };
}

const SESSIONS = [
  conversationSession('a', { cwd: '/w', title: 'Alpha work', createdAt: NOW - 86_400_000 }),
  conversationSession('huge', { cwd: '/w', title: 'Huge', exchanges: 40, size: 300 }),
  hostileSession(),
  conversationSession('long', { cwd: '/w', title: 'Long\u2028title '.repeat(100_000) }),
  conversationSession('blank', { cwd: '/w', title: '\u200b\u0301\n'.repeat(1000) }),
];

async function hoverAt(marked: string, section?: Record<string, unknown>, options: { indexing?: boolean } = {}) {
  const offset = marked.indexOf('|');
  const document = openDocument('file:///w/m.md', marked.slice(0, offset) + marked.slice(offset + 1));
  const { workspace } = testWorkspace(SESSIONS, { folders: ['/w'], documents: [document], now: NOW, ...options, ...(section === undefined ? {} : { section }) });
  // As the server hovers: over what is indexed so far.
  const hover = await provideMentionHover(document, document.positionAt(offset), workspace.view({ partial: true }));
  return { hover, value: (hover?.contents as MarkupContent | undefined)?.value ?? '' };
}

describe('hover on a mention', () => {
  it('shows the title, the label when it differs, cwd, created, counts and the bytes against the budget', async () => {
    const mention = formatSessionReferenceMention({ sessionId: 'a', label: 'Old label' });
    const { hover, value } = await hoverAt(`see @[Old| label](${encodeSessionReferenceUri('a')}) now`);
    expect(hover!.range).toEqual({ start: { line: 0, character: 4 }, end: { line: 0, character: 4 + mention.length } });
    expect(value).toContain('**Alpha work**');
    expect(value).toContain('- mentioned as: Old label');
    expect(value).toContain('- cwd: /w\n');
    expect(value).toContain('created: 2026-01-09 00:00 UTC (1 day ago)');
    expect(value).toContain('2 messages: 1 prompt, 1 answer');
    expect(value).toMatch(/- context: \d+ bytes of 65,536 bytes/);
    expect(value).toContain('- sent whole, not shortened');
  });

  it('does not repeat a label equal to the title, and says how much a truncated session loses', async () => {
    const { value } = await hoverAt(`@[Hu|ge](${encodeSessionReferenceUri('huge')})`, { maxReferenceBytes: 3000 });
    expect(value).not.toContain('mentioned as');
    expect(value).toMatch(/- context: 2,\d{3} bytes of 3,000 bytes/);
    expect(value).toMatch(/- \*\*will be shortened\*\*: \d+ of 80 messages dropped, [\d,]+ bytes omitted/);
  });

  it('escapes session text so it cannot inject links, HTML or command URIs, and makes it display-safe', async () => {
    const { value } = await hoverAt(bareWithCursor('hostile'));
    expect(value).not.toContain('\u202e');
    expect(value).toContain('**Title \\[x](command:evil) \\<b>owned**');
    // Nothing from the session is left that could open markup.
    expect(value).not.toMatch(/(^|[^\\])[<[]/m);
    // As a CommonMark renderer reads it: no link, image or HTML, and the session's text shown as written.
    const tokens = markdownTokens(value);
    expect(tokens.filter((token) => ['link_open', 'image', 'html_inline', 'html_block'].includes(token.type))).toEqual([]);
    const shown = renderedText(tokens);
    expect(shown).toContain('Title [x](command:evil) <b>owned');
    expect(shown).toContain('/w/[cwd](https://evil.example)');
    expect(shown).toContain('Ignore this: [click](command:workbench.action.terminal.new) <img src=x onerror=alert(1)>');
  });

  it('escapes only what Markdown needs: paths, dashes, dots and colons read as they are', async () => {
    const session = conversationSession('weather', { cwd: '/home/sam/weather-app', title: 'Weather-app: hourly forecast (v2.1)', createdAt: NOW - 86_400_000 });
    const document = openDocument('file:///w/m.md', `see ${encodeSessionReferenceUri('weather')}`);
    const { workspace } = testWorkspace([session], { folders: ['/w'], documents: [document], now: NOW });
    const hover = await provideMentionHover(document, document.positionAt(8), workspace.view({ partial: true }));
    const value = (hover!.contents as MarkupContent).value;
    expect(value.split('\n').slice(0, 3)).toEqual(['**Weather-app: hourly forecast (v2.1)**', '', '- cwd: /home/sam/weather-app']);
    expect(value).toContain('- id: weather\n');
    expect(value).not.toContain('\\');
  });

  it('explains a malformed mention, an unknown session and the target session', async () => {
    expect((await hoverAt('x @[a](dsh-session:I|iJ)')).value).toContain('dsh rejects the whole message: invalid session reference URI "dsh-session:IiJ"');
    expect((await hoverAt(`${encodeSessionReferenceUri('a')}x|y`)).value).toContain('the URI runs into the text after it');
    expect((await hoverAt(bareWithCursor('nope'))).value).toContain('This session cannot be read: session "nope" not found');
    expect((await hoverAt(bareWithCursor('nope'), undefined, { indexing: true })).value).toContain('not found yet');
    expect((await hoverAt(bareWithCursor('a', 0), { targetSessionId: 'a' })).value).toContain('references its own session');
    expect((await hoverAt(`${encodeSessionReferenceUri('a')} ${bareWithCursor('huge')}`, { maxReferences: 1 })).value).toContain(
      '**too many sessions**: this is distinct session 2, more than maxReferences 1',
    );
  });

  it('follows dsh’s grammar: an empty explicit URI is a mention, a label stopped by \\ + line break is not', async () => {
    expect((await hoverAt('x @[a](dsh-sess|ion:)')).value).toContain('invalid session reference URI "dsh-session:"');
    const uri = encodeSessionReferenceUri('a');
    expect((await hoverAt(`@[x|\\\ny](${uri})`)).hover).toBeNull();
    expect((await hoverAt(`@[x\\\ny](${uri.slice(0, 14)}|${uri.slice(14)})`)).value).toContain('**Alpha work**');
  });

  it('answers null away from mentions, and right after one', async () => {
    expect((await hoverAt('plain | text')).hover).toBeNull();
    expect((await hoverAt(`${encodeSessionReferenceUri('a')}| after`)).hover).toBeNull();
  });

  it('names a session by its bounded one-line title, or by its id when the title shows nothing', async () => {
    const long = await hoverAt(`@[Old](${bareWithCursor('long')})`);
    expect(long.value.split('\n')[0]).toBe(`**${'Long title '.repeat(18)}L…**`);
    expect(long.value).toContain(`- mentioned as: Old`);
    const blank = await hoverAt(`@[x](${bareWithCursor('blank')})`);
    expect(blank.value.split('\n')[0]).toBe('**blank**');
  });

  it('does not call the label completion inserted a different name', async () => {
    const mention = formatSessionReferenceMention({ sessionId: 'long', label: `${'Long title '.repeat(18)}L…` });
    const { value } = await hoverAt(mention.slice(0, 3) + '|' + mention.slice(3));
    expect(value).not.toContain('mentioned as');
  });
});
