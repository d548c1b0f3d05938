import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { CompletionItemKind, type CompletionItem, type TextEdit } from 'vscode-languageserver-types';
import { TRIGGER_SUGGEST_COMMAND, findFileMentionToken, looksLikePath, provideFileMentionCompletion, provideMentionCompletion } from './fileMentions';
import { denseMentionText, dshScan } from '../../../test/support/dshMentionGrammar';
import { conversationSession } from '../testing/mentionFixtures';
import { testWorkspace } from '../testing/testWorkspace';

let workspaceDir: string;
/** A folder beside the workspace (outside it), holding a `shadow`. */
let outsideDir: string;

beforeAll(() => {
  workspaceDir = mkdtempSync(path.join(os.tmpdir(), 'dsh-file-mentions-'));
  const files = [
    'README.md',
    'src/main.ts',
    'src/services/weatherClient.ts',
    'my notes/plan one.md',
    'docs/guide.md',
    'prompts/p.md',
    '.env',
    '.git/config',
    'node_modules/weather-lib/index.js',
    'bad"name.txt',
    'ctl\u0001name.txt',
    'bidi\u202ename.txt',
  ];
  for (const file of files) {
    mkdirSync(path.dirname(path.join(workspaceDir, file)), { recursive: true });
    writeFileSync(path.join(workspaceDir, file), 'x');
  }
  symlinkSync(path.join(workspaceDir, 'docs'), path.join(workspaceDir, 'linked-docs'));
  outsideDir = mkdtempSync(path.join(os.tmpdir(), 'dsh-file-mentions-outside-'));
  writeFileSync(path.join(outsideDir, 'shadow'), 'x');
  symlinkSync(outsideDir, path.join(workspaceDir, 'link'));
  symlinkSync('/etc', path.join(workspaceDir, 'etc-link'));
  symlinkSync(path.join(outsideDir, 'shadow'), path.join(workspaceDir, 'docs', 'shadow-link'));
  symlinkSync(path.join(workspaceDir, 'README.md'), path.join(workspaceDir, 'docs', 'readme-link'));
  symlinkSync(path.join(workspaceDir, 'nowhere'), path.join(workspaceDir, 'docs', 'dangling'));
});

afterAll(() => {
  rmSync(workspaceDir, { recursive: true, force: true });
  rmSync(outsideDir, { recursive: true, force: true });
});

function marked(text: string) {
  const offset = text.indexOf('|');
  return { text: text.slice(0, offset) + text.slice(offset + 1), offset };
}

/** Complete at `|` in a document at `documentPath` (default: a prompt inside the workspace folder). */
async function complete(text: string, options: { documentPath?: string; folders?: string[]; uri?: string } = {}) {
  const { text: content, offset } = marked(text);
  const uri = options.uri ?? pathToFileURL(options.documentPath ?? path.join(workspaceDir, 'prompts', 'p.md')).href;
  const document = TextDocument.create(uri, 'markdown', 1, content);
  const { workspace } = testWorkspace([conversationSession('src-session', { cwd: '/else', title: 'src work' })], {
    folders: options.folders ?? [workspaceDir],
    documents: [document],
  });
  const list = await provideFileMentionCompletion(document, document.positionAt(offset), workspace);
  return { list, document, workspace, offset };
}

const labels = (items: CompletionItem[]) => items.map((item) => item.label);
const accept = (document: TextDocument, item: CompletionItem) => TextDocument.applyEdits(document, [item.textEdit as TextEdit]);

describe('the file-mention token', () => {
  it.each([
    ['@|', { at: 0, end: 1, quoted: false, query: '' }],
    ['see @src/ma|in.ts now', { at: 4, end: 16, quoted: false, query: 'src/ma' }],
    ['@"my no|', { at: 0, end: 7, quoted: true, query: 'my no' }],
    ['x @"my no|tes/plan one.md" y', { at: 2, end: 25, quoted: true, query: 'my no' }],
    ['@"a b" @s|', { at: 7, end: 9, quoted: false, query: 's' }],
    ['line\n@"a| b', { at: 5, end: 8, quoted: true, query: 'a' }],
  ])('%j', (text, token) => {
    const { text: content, offset } = marked(text);
    expect(findFileMentionToken(content, offset)).toEqual(token);
  });

  it.each([['me@example|'], ['@[lab|el'], ['@"a"|'], ['say "@x|'], ['x|'], [`${formatSessionReferenceMention({ sessionId: 'a' }).slice(0, 3)}|`]])(
    'none in %j',
    (text) => {
      const { text: content, offset } = marked(text);
      expect(findFileMentionToken(content, offset)).toBeUndefined();
    },
  );

  it('none inside a session mention', () => {
    const mention = formatSessionReferenceMention({ sessionId: 'a', label: 'src' });
    expect(findFileMentionToken(mention, 4)).toBeUndefined();
  });

  it('is the token the rule finds with a scan of the whole text, anywhere in random text', () => {
    // The token rule as first written: the whole line for the quote, every match of dsh's expression in the text.
    const reference = (text: string, offset: number) => {
      if (offset < 1 || offset > text.length) return undefined;
      const startsToken = (at: number) => text[at] === '@' && (at === 0 || /\s/.test(text[at - 1]!));
      let lineStart = offset;
      while (lineStart > 0 && !/[\r\n]/.test(text[lineStart - 1]!)) lineStart--;
      let token;
      const quote = text.lastIndexOf('"', offset - 1);
      if (quote > lineStart && startsToken(quote - 1)) {
        let end = offset;
        while (end < text.length && !/[\r\n]/.test(text[end]!) && text[end] !== '"') end++;
        if (text[end] === '"') {
          end++;
        } else {
          end = offset;
          while (end < text.length && !/\s/.test(text[end]!)) end++;
        }
        token = { at: quote - 1, end, quoted: true, query: text.slice(quote + 1, offset) };
      } else {
        let start = offset;
        while (start > lineStart && !/\s/.test(text[start - 1]!)) start--;
        if (start === offset || !startsToken(start)) return undefined;
        const query = text.slice(start + 1, offset);
        if (query.startsWith('"') || query.startsWith('[')) return undefined;
        let end = offset;
        while (end < text.length && !/\s/.test(text[end]!)) end++;
        token = { at: start, end, quoted: false, query };
      }
      if (dshScan(text).some((m) => m.start < token.end && m.end > token.at)) return undefined;
      return token;
    };
    const piece = fc.constantFrom(
      '@', '"', '@"', '[', ']', '(', ')', '\\', ' ', '\n', '\r\n', '\t', 'x', 'a b', 'dsh-session:ab', '@[', '](', '@x', '@"a b"',
      '](dsh-session:z)', '@[a b](dsh-session:x)', '@[a "b](dsh-session:y)', '@[a\\] b](dsh-session:w)', 'a] b', '@[a ',
    );
    // Grammar-dense texts too, with quotes and `@"` mixed in.
    const dense = fc.array(fc.oneof(denseMentionText(6), fc.constantFrom('"', '@"', ' @')), { maxLength: 10 }).map((parts) => parts.join(''));
    const text = fc.oneof(fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join('')), dense);
    fc.assert(
      fc.property(text, fc.nat(), (text, pick) => {
        const offset = pick % (text.length + 2);
        expect(findFileMentionToken(text, offset)).toEqual(reference(text, offset));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('file-mention completion', () => {
  it('lists the workspace folder’s top level: folders first, hidden, skipped and unsafe names left out', async () => {
    const { list } = await complete('read @|');
    expect(labels(list.items)).toEqual(['docs/', 'linked-docs/', 'my notes/', 'prompts/', 'src/', 'README.md']);
    expect(list.items.map((item) => item.sortText)).toEqual(['a000000', 'a000001', 'a000002', 'a000003', 'a000004', 'a000005']);
    // Deeper matches appear once a name is typed.
    expect(list.isIncomplete).toBe(true);
  });

  it('inserts a file whole without repeating the @, and a folder with its / and a re-trigger', async () => {
    const { list, document } = await complete('read @READ|');
    const [readme] = list.items;
    expect(readme).toMatchObject({ label: 'README.md', kind: CompletionItemKind.File, filterText: 'READ README.md' });
    expect(readme!.command).toBeUndefined();
    expect(accept(document, readme!)).toBe('read @README.md');
    const folders = await complete('read @sr|c');
    const src = folders.list.items.find((item) => item.label === 'src/')!;
    expect(src).toMatchObject({ kind: CompletionItemKind.Folder, command: { command: TRIGGER_SUGGEST_COMMAND } });
    expect(accept(folders.document, src)).toBe('read @src/');
  });

  it('continues inside a folder after its /', async () => {
    const { list, document } = await complete('@src/|');
    expect(labels(list.items)).toEqual(['src/services/', 'src/main.ts']);
    expect(list.isIncomplete).toBe(false);
    expect(accept(document, list.items[1]!)).toBe('@src/main.ts');
    expect(labels((await complete('@linked-docs/|')).list.items)).toEqual(['linked-docs/guide.md', 'linked-docs/readme-link']);
  });

  it('never offers the document being written', async () => {
    // The document is prompts/p.md; another file in the same folder is still offered.
    writeFileSync(path.join(workspaceDir, 'prompts', 'q.md'), 'x');
    try {
      expect(labels((await complete('@prompts/|')).list.items)).toEqual(['prompts/q.md']);
      expect(labels((await complete('@p.|')).list.items)).toEqual([]);
    } finally {
      rmSync(path.join(workspaceDir, 'prompts', 'q.md'));
    }
  });

  it('finds deeper files by name, never below .git or node_modules', async () => {
    expect(labels((await complete('@weath|')).list.items)).toEqual(['src/services/weatherClient.ts']);
    expect(labels((await complete('@conf|')).list.items)).toEqual([]);
    expect(labels((await complete('@index|')).list.items)).toEqual([]);
  });

  it('quotes paths with spaces: a file closed, a folder left open', async () => {
    const folder = await complete('@my|');
    expect(folder.list.items.map((item) => (item.textEdit as TextEdit).newText)).toEqual(['"my notes/']);
    expect(accept(folder.document, folder.list.items[0]!)).toBe('@"my notes/');
    const file = await complete('see @"my notes/pl| next');
    expect(labels(file.list.items)).toEqual(['my notes/plan one.md']);
    expect(accept(file.document, file.list.items[0]!)).toBe('see @"my notes/plan one.md" next');
    const closed = await complete('@"my notes/pl|an one.md" next');
    expect(accept(closed.document, closed.list.items[0]!)).toBe('@"my notes/plan one.md" next');
  });

  it('offers hidden entries once a name starting with . is typed', async () => {
    expect(labels((await complete('@.e|')).list.items)).toEqual(['.env']);
  });

  it('does not leave the folder (.., absolute or home paths)', async () => {
    for (const query of ['@../|', '@/etc/|', '@~/|', '@src/../|']) {
      expect((await complete(query)).list.items).toEqual([]);
    }
  });

  it('answers a path holding a NUL with nothing (no file can have one), typed or in the document’s folder', async () => {
    for (const query of ['@src\u0000x/|', '@"src/\u0000 x/|', '@src/a\u0000.md|', '@\u0000|']) {
      expect((await complete(query)).list.items).toEqual([]);
    }
    const nulFolder = pathToFileURL(path.join(workspaceDir, 'a\u0000b', 'p.md')).href;
    expect((await complete('@|', { uri: nulFolder, folders: [] })).list.items).toEqual([]);
  });

  it('offers nothing for a document outside every workspace folder', async () => {
    // Its own folder might be anything: /etc, /proc/self. The workspace is what `@` offers.
    expect((await complete('@|', { documentPath: path.join(workspaceDir, 'src', 'note.md'), folders: ['/somewhere/else'] })).list.items).toEqual([]);
    expect((await complete('@sha|', { uri: 'file:///etc/x.md' })).list.items).toEqual([]);
    expect((await complete('@|', { uri: 'file:///etc/x.md' })).list).toEqual({ isIncomplete: false, items: [] });
    expect((await complete('@|', { documentPath: path.join(workspaceDir, 'src', 'note.md'), folders: [] })).list.items).toEqual([]);
    expect((await complete('@|', { uri: 'untitled:Untitled-1', folders: [] })).list.items).toEqual([]);
    // A document without a path (untitled) in a window with a workspace folder gets that folder.
    expect(labels((await complete('@sr|', { uri: 'untitled:Untitled-1' })).list.items)).toEqual(['src/']);
  });

  it('never follows a link out of the workspace, nor lists one', async () => {
    for (const query of ['@link/|', '@link/sha|', '@etc-link/|', '@etc-link/pass|', '@docs/shadow|', '@shadow|', '@pass|', '@"link/|']) {
      expect((await complete(query)).list.items, query).toEqual([]);
    }
    expect(labels((await complete('@|')).list.items)).not.toContain('link/');
    expect(labels((await complete('@li|')).list.items)).toEqual(['linked-docs/']);
    expect(labels((await complete('@docs/|')).list.items)).toEqual(['docs/guide.md', 'docs/readme-link']);
  });

  it('follows a link inside the workspace when its path is typed, not in a search by name', async () => {
    // Typed, the link is the folder it names; a search by name finds that folder's files once, where they are.
    expect(labels((await complete('@linked-docs/|')).list.items)).toEqual(['linked-docs/guide.md', 'linked-docs/readme-link']);
    expect(labels((await complete('@gui|')).list.items)).toEqual(['docs/guide.md']);
    expect(labels((await complete('@readme|')).list.items)).toEqual(['README.md', 'docs/readme-link']);
  });

  it('stays inside a workspace folder reached through a link', async () => {
    const linkedWorkspace = path.join(outsideDir, 'workspace-link');
    symlinkSync(workspaceDir, linkedWorkspace);
    try {
      const options = { folders: [linkedWorkspace], documentPath: path.join(linkedWorkspace, 'prompts', 'p.md') };
      expect(labels((await complete('@src/|', options)).list.items)).toEqual(['src/services/', 'src/main.ts']);
      expect(labels((await complete('@li|', options)).list.items)).toEqual(['linked-docs/']);
      expect((await complete('@link/|', options)).list.items).toEqual([]);
    } finally {
      rmSync(linkedWorkspace);
    }
  });

  it('cuts at candidateLimit and says so', async () => {
    const { document, workspace } = await complete('@|');
    workspace.setSection({ candidateLimit: 2 });
    const list = await provideFileMentionCompletion(document, document.positionAt(1), workspace);
    expect(labels(list.items)).toEqual(['docs/', 'linked-docs/']);
    expect(list.isIncomplete).toBe(true);
  });

  it('answers CANCELLED when cancelled', async () => {
    const { document, workspace } = await complete('@|');
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(provideFileMentionCompletion(document, document.positionAt(1), workspace, controller.signal)).rejects.toMatchObject({
      code: 'SESSION_REFERENCE_CANCELLED',
    });
  });

  it('lists the sessions first and the files after them for a token that is not a path', async () => {
    const { document, workspace, offset } = await complete('@src|');
    const list = await provideMentionCompletion(document, document.positionAt(offset), workspace);
    expect(labels(list.items)).toEqual(['src work', 'src/']);
    expect(list.items.map((item) => item.sortText)).toEqual(['b000000', 'c000000']);
    const quoted = await complete('@"sr|');
    expect(labels((await provideMentionCompletion(quoted.document, quoted.document.positionAt(quoted.offset), quoted.workspace)).items)).toEqual(['src/']);
  });

  it('keeps offering files when the sessions root is not read, after the notice', async () => {
    const { text, offset } = marked('@src|');
    const document = TextDocument.create(pathToFileURL(path.join(workspaceDir, 'prompts', 'p.md')).href, 'markdown', 1, text);
    const { workspace, store } = testWorkspace([], { folders: [workspaceDir], documents: [document], section: { sessionsRoot: '/nowhere' } });
    store.setStatus({ rootExists: false, rootProblem: 'missing' });
    const list = await provideMentionCompletion(document, document.positionAt(offset), workspace);
    expect(labels(list.items)).toEqual(['No dsh sessions: /nowhere does not exist', 'src/']);
    expect(list.isIncomplete).toBe(true);
    expect(accept(document, list.items[0]!)).toBe('@src');
    expect(accept(document, list.items[1]!)).toBe('@src/');
    // A quoted path is never a session token: files only, no notice.
    const quoted = TextDocument.create(document.uri, 'markdown', 1, '@"sr');
    expect(labels((await provideMentionCompletion(quoted, quoted.positionAt(4), workspace)).items)).toEqual(['src/']);
  });
});

describe('the order of sessions and files (setting fileMentions)', () => {
  // A session for each kind of token: its cwd holds `src/`, its title starts with `.env`.
  const SESSIONS = [
    conversationSession('app-session', { cwd: '/work/src/app', title: 'App work', createdAt: Date.UTC(2026, 0, 3) }),
    conversationSession('env-session', { cwd: '/else', title: '.env cleanup', createdAt: Date.UTC(2026, 0, 2) }),
  ];

  async function merged(text: string, section: Record<string, unknown> = {}) {
    const { text: content, offset } = marked(text);
    const document = TextDocument.create(pathToFileURL(path.join(workspaceDir, 'prompts', 'p.md')).href, 'markdown', 1, content);
    const { workspace } = testWorkspace(SESSIONS, { folders: [workspaceDir], documents: [document], section });
    const list = await provideMentionCompletion(document, document.positionAt(offset), workspace);
    const kinds = list.items.map((item) => (item.data as { kind: string }).kind === 'dsh-session' ? 'session' : 'file');
    // Clients sort by sortText before they filter: the order must survive that sort.
    const sorted = [...list.items].sort((a, b) => (a.sortText! < b.sortText! ? -1 : a.sortText! > b.sortText! ? 1 : 0));
    expect(sorted).toEqual(list.items);
    return { list, kinds, letters: [...new Set(list.items.map((item) => item.sortText![0]))] };
  }

  it('tells a path-like token: a `/` anywhere, or a leading `.` or `~`', () => {
    for (const query of ['src/', 'a/b', '/abs', '.', '..', '.env', '~', '~/notes']) expect(looksLikePath(query), query).toBe(true);
    for (const query of ['', 'src', 'a.b', 'x~', 'app-work']) expect(looksLikePath(query), query).toBe(false);
  });

  it('after (the default): a bare `@` lists every session, then the files', async () => {
    const { list, kinds, letters } = await merged('see @|');
    expect(kinds.indexOf('file')).toBe(2);
    expect(kinds.slice(2).every((kind) => kind === 'file')).toBe(true);
    expect(labels(list.items.slice(0, 2))).toEqual(['App work', '.env cleanup']);
    expect(letters).toEqual(['b', 'c']);
    expect(list.items[2]!.sortText).toBe('c000000');
  });

  it('after (the default): a token that looks like a path lists the files first', async () => {
    const inFolder = await merged('@src/|');
    expect(labels(inFolder.list.items)).toEqual(['src/services/', 'src/main.ts', 'App work']);
    expect(inFolder.letters).toEqual(['a', 'b']);
    const hidden = await merged('@.en|');
    expect(labels(hidden.list.items)).toEqual(['.env', '.env cleanup']);
    expect(hidden.kinds).toEqual(['file', 'session']);
    // `~` leads too, whatever files it finds (none here: paths leave the workspace).
    expect((await merged('@~|')).kinds.every((kind) => kind === 'session')).toBe(true);
  });

  it('before: the files always lead, as a path-like token would', async () => {
    const { list, kinds, letters } = await merged('see @|', { fileMentions: 'before' });
    expect(kinds.slice(-2)).toEqual(['session', 'session']);
    expect(kinds.slice(0, -2).every((kind) => kind === 'file')).toBe(true);
    expect(kinds.length).toBeGreaterThan(2);
    expect(letters).toEqual(['a', 'b']);
    expect(list.items[0]!.sortText).toBe('a000000');
  });

  it('off: sessions only, and nothing for a quoted path', async () => {
    expect((await merged('see @|', { fileMentions: 'off' })).kinds).toEqual(['session', 'session']);
    expect(labels((await merged('@src/|', { fileMentions: 'off' })).list.items)).toEqual(['App work']);
    expect((await merged('@"sr|', { fileMentions: 'off' })).list.items).toEqual([]);
  });
});
