import { scanSessionMentions } from '@dsh-session-ls/shared';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  CompletionItemKind,
  InsertTextFormat,
  type CompletionItem,
  type CompletionList,
  type Position,
} from 'vscode-languageserver-types';
import { throwIfCancelled } from '../resolver';
import { completionSortText, provideSessionCompletion } from './completion';
import { mentionScanStart } from './completionToken';
import type { FileMentionsOrder, SessionServices, WorkspaceFileSystem } from './services';
import { SKIPPED_NAMES, WorkspaceFiles } from './workspaceFiles';

/** The `@path` or `@"path` token around the cursor (UTF-16 offsets into the document text). */
export interface FileMentionToken {
  /** Offset of the `@`. */
  at: number;
  /** Offset just past the token: the closing quote, else the end of its non-whitespace run. */
  end: number;
  /** True for `@"…`. */
  quoted: boolean;
  /** The path typed so far (without the quote). */
  query: string;
}

/** What a file completion item carries. */
export interface FileMentionCompletionData {
  kind: 'dsh-file';
  path: string;
  directory: boolean;
}

/** The command that makes VS Code ask again after a directory is inserted. */
export const TRIGGER_SUGGEST_COMMAND = 'editor.action.triggerSuggest';

// A path that could not be inserted faithfully (a quote ends `@"…"`) or would smuggle controls into the text.
const UNOFFERABLE = /["\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const WHITESPACE = /\s/;
const LINE_BREAK = /[\r\n]/;

function startsToken(text: string, at: number): boolean {
  return text.charCodeAt(at) === 0x40 /* @ */ && (at === 0 || WHITESPACE.test(text[at - 1]!));
}

/**
 * The file-mention token at `offset`, as dsh's composer finds one: an `@` at the start of a line or after
 * whitespace, then either `"` and a path that may hold spaces (up to the closing quote), or a run of
 * non-whitespace. Not inside a session mention, and not an explicit mention's `@[`.
 */
export function findFileMentionToken(text: string, offset: number): FileMentionToken | undefined {
  if (offset < 1 || offset > text.length) return undefined;
  // A quoted path may hold spaces: the last quote before the cursor on its line opens it.
  let quote = offset - 1;
  while (quote >= 0 && text[quote] !== '"' && !LINE_BREAK.test(text[quote]!)) quote--;
  let token: FileMentionToken | undefined;
  if (quote >= 1 && text[quote] === '"' && startsToken(text, quote - 1)) {
    let end = offset;
    while (end < text.length && !LINE_BREAK.test(text[end]!) && text[end] !== '"') end++;
    if (text[end] === '"') {
      end++;
    } else {
      // No closing quote on the line: the token is what is glued to the cursor.
      end = offset;
      while (end < text.length && !WHITESPACE.test(text[end]!)) end++;
    }
    token = { at: quote - 1, end, quoted: true, query: text.slice(quote + 1, offset) };
  } else {
    let start = offset;
    while (start > 0 && !WHITESPACE.test(text[start - 1]!)) start--;
    if (start === offset || !startsToken(text, start)) return undefined;
    const query = text.slice(start + 1, offset);
    if (query.startsWith('"') || query.startsWith('[')) return undefined;
    let end = offset;
    while (end < text.length && !WHITESPACE.test(text[end]!)) end++;
    token = { at: start, end, quoted: false, query };
  }
  // Runs on every keystroke: scan for mentions from a nearby point the whole-text scan passes (the `@` follows whitespace).
  const from = mentionScanStart(text, token.at);
  for (const mention of scanSessionMentions(from === 0 ? text : text.slice(from))) {
    if (from + mention.start >= token.end) break;
    if (from + mention.end > token.at) return undefined;
  }
  return token;
}

/**
 * The folder file mentions are relative to: the workspace folder holding the document (for a document
 * without a path, such as an untitled one, the workspace's folder). None for a document outside every
 * workspace folder: its own folder may be anything (`/etc`, `/proc/self`), and `@` offers the workspace only.
 */
async function mentionBase(document: TextDocument, services: SessionServices, signal?: AbortSignal): Promise<string | undefined> {
  const fileSystem = services.workspaceFiles;
  const documentPath = fileSystem.pathOf(document.uri);
  // With no target session, the target cwd is the workspace folder holding the document (or another folder).
  const { cwd } = await services.resolveTarget({ sessionId: null }, document.uri, signal);
  if (cwd === undefined) return undefined;
  if (documentPath === undefined || documentPath.startsWith(cwd.endsWith(fileSystem.sep) ? cwd : cwd + fileSystem.sep)) return cwd;
  return undefined;
}

/** The directory part of a typed path, when it stays inside the base folder; undefined otherwise. */
function directoryPart(query: string): string | undefined {
  const slash = query.lastIndexOf('/');
  const directory = slash < 0 ? '' : query.slice(0, slash + 1);
  if (directory.startsWith('/') || directory.startsWith('~') || directory.includes('\\')) return undefined;
  if (directory.split('/').some((segment) => segment === '..')) return undefined;
  return directory;
}

interface FoundEntry {
  /** Relative to the base folder, `/`-separated, no trailing slash. */
  path: string;
  directory: boolean;
}

function offerable(entry: FoundEntry): boolean {
  return !UNOFFERABLE.test(entry.path) && !entry.path.split('/').some((segment) => SKIPPED_NAMES.has(segment));
}

/** Where {@link findMentionableFiles} looks. */
export interface MentionableFilesSearch {
  /** The listings and searches, kept so that the keystrokes of one token read no folder twice. */
  files: WorkspaceFiles;
  /** Joins a folder and a `/`-separated relative path (the host's `WorkspaceFileSystem.join`). */
  join: WorkspaceFileSystem['join'];
  signal?: AbortSignal;
  /** The path of the document being written, never offered. */
  excludedPath?: string;
}

/**
 * Workspace entries for a typed path: the children of its directory part whose name starts with the
 * last segment (case-insensitive; hidden ones only when that segment starts with `.`), and, for a path
 * without `/`, entries anywhere in the tree whose name starts with it (a search by name that goes on
 * where the previous keystroke's stopped). Nothing whose real path leaves `base` is listed. Bounded and
 * cancellable; `incomplete` when the list was cut or a search stopped at a bound, so a longer path may
 * find more.
 */
export async function findMentionableFiles(
  base: string,
  query: string,
  limit: number,
  search: MentionableFilesSearch,
): Promise<{ entries: FoundEntry[]; incomplete: boolean }> {
  const { files, join, signal, excludedPath } = search;
  const directory = directoryPart(query);
  if (directory === undefined) return { entries: [], incomplete: false };
  const prefix = query.slice(directory.length).toLocaleLowerCase();
  const dot = prefix.startsWith('.');
  // The document being written is never worth mentioning in itself.
  const shown = (entry: FoundEntry): boolean => offerable(entry) && (excludedPath === undefined || join(base, entry.path) !== excludedPath);
  const ranked: { entry: FoundEntry; depth: number }[] = [];
  let incomplete: boolean;
  if (directory === '' && prefix !== '') {
    const found = await files.findByName(base, prefix, { dot, limit, shown, join, ...(signal === undefined ? {} : { signal }) });
    for (const match of found.matches) {
      const entry = { path: match.path, directory: match.directory };
      if (shown(entry)) ranked.push({ entry, depth: match.depth });
    }
    incomplete = !found.complete;
  } else {
    // The folder without the directory part's `/`: one snapshot per folder however it is reached.
    const level = await files.children(join(base, directory.slice(0, -1)), base, signal);
    for (const child of level.entries) {
      if (!child.lowerName.startsWith(prefix) || (!dot && child.name.startsWith('.'))) continue;
      const entry = { path: directory + child.name, directory: child.directory };
      if (shown(entry)) ranked.push({ entry, depth: 1 });
    }
    // At the top with nothing typed, matches inside its folders come once a name is typed: the client must ask again.
    incomplete = level.cut || (directory === '' && level.entries.some((child) => child.directory && !child.name.startsWith('.') && shown({ path: child.name, directory: true })));
  }
  throwIfCancelled(signal);
  // Nearest first (fewest segments), then directories, then by name; files and folders of the typed level lead.
  ranked.sort(
    (a, b) =>
      a.depth - b.depth ||
      Number(b.entry.directory) - Number(a.entry.directory) ||
      (a.entry.path < b.entry.path ? -1 : a.entry.path > b.entry.path ? 1 : 0),
  );
  return { entries: ranked.slice(0, limit).map(({ entry }) => entry), incomplete: incomplete || ranked.length > limit };
}

/** The text that replaces the typed path: a file whole (quoted and closed when needed), a directory with its `/` (a quote left open). */
function insertion(entry: FoundEntry, quoted: boolean): string {
  const shown = entry.directory ? entry.path + '/' : entry.path;
  const quote = quoted || WHITESPACE.test(entry.path);
  if (!quote) return shown;
  return entry.directory ? `"${shown}` : `"${shown}"`;
}

/**
 * File-mention completion at `position` (lsp-contract.md, File mentions): workspace files and
 * directories for an `@path` or `@"path` token, in sortText group `group` (`a` before the sessions, `c`
 * after them; see {@link filesFirst}). The edit never
 * repeats the `@`; a directory keeps the completion going (`editor.action.triggerSuggest`, and `/` is a
 * trigger character for other clients). Listings come from `files` (the language service's snapshots),
 * else straight from the services' workspace file system.
 */
export async function provideFileMentionCompletion(
  document: TextDocument,
  position: Position,
  services: SessionServices,
  signal?: AbortSignal,
  files?: WorkspaceFiles,
  group: 'a' | 'c' = 'a',
): Promise<CompletionList> {
  const text = document.getText();
  const offset = document.offsetAt(position);
  const token = findFileMentionToken(text, offset);
  if (token === undefined) return { isIncomplete: false, items: [] };
  const base = await mentionBase(document, services, signal);
  if (base === undefined) return { isIncomplete: false, items: [] };
  const limit = services.resolver().config.candidateLimit;
  const fileSystem = services.workspaceFiles;
  const excludedPath = fileSystem.pathOf(document.uri);
  const { entries, incomplete } = await findMentionableFiles(base, token.query, limit, {
    files: files ?? new WorkspaceFiles({ lister: fileSystem.list }),
    join: fileSystem.join,
    ...(signal === undefined ? {} : { signal }),
    ...(excludedPath === undefined ? {} : { excludedPath }),
  });
  const range = { start: document.positionAt(token.at + 1), end: document.positionAt(token.end) };
  const typed = text.slice(token.at + 1, offset);
  const items = entries.map((entry, rank): CompletionItem => {
    const data: FileMentionCompletionData = { kind: 'dsh-file', path: entry.path, directory: entry.directory };
    const newText = insertion(entry, token.quoted);
    return {
      label: entry.directory ? entry.path + '/' : entry.path,
      kind: entry.directory ? CompletionItemKind.Folder : CompletionItemKind.File,
      textEdit: { range, newText },
      insertTextFormat: InsertTextFormat.PlainText,
      // What was typed first, so every client's own filter keeps what the server matched.
      filterText: `${typed} ${newText}`,
      sortText: completionSortText(group, rank),
      ...(entry.directory ? { command: { title: 'Complete inside the folder', command: TRIGGER_SUGGEST_COMMAND } } : {}),
      data,
    };
  });
  return { isIncomplete: incomplete, items };
}

/** True when what is typed after the `@` looks like a path: it holds a `/`, or starts with `.` or `~`. */
export function looksLikePath(query: string): boolean {
  return query.includes('/') || query.startsWith('.') || query.startsWith('~');
}

/**
 * Whether files come before the sessions in the list of the `@` token at `offset`: always with `before`;
 * with `after` (the default) only when the token looks like a path ({@link looksLikePath}).
 */
export function filesFirst(order: FileMentionsOrder, text: string, offset: number): boolean {
  if (order !== 'after') return order === 'before';
  const token = findFileMentionToken(text, offset);
  return token !== undefined && looksLikePath(token.query);
}

/**
 * Completion at an `@` token: sessions, then workspace files — files first when the token looks like a
 * path, or always, or never, as the `fileMentions` setting says (each feature decides whether its kind
 * applies). `sortText` carries that order. Incomplete when either list is; a failing file search never
 * hides the sessions.
 */
export async function provideMentionCompletion(
  document: TextDocument,
  position: Position,
  services: SessionServices,
  signal?: AbortSignal,
  listings?: WorkspaceFiles,
): Promise<CompletionList> {
  const order = services.settings().fileMentions;
  const sessions = provideSessionCompletion(document, position, services, signal);
  if (order === 'off') return sessions;
  const first = filesFirst(order, document.getText(), document.offsetAt(position));
  const files = provideFileMentionCompletion(document, position, services, signal, listings, first ? 'a' : 'c').catch((): CompletionList => {
    throwIfCancelled(signal);
    return { isIncomplete: false, items: [] };
  });
  const [fileList, sessionList] = await Promise.all([files, sessions]);
  const items = first ? [...fileList.items, ...sessionList.items] : [...sessionList.items, ...fileList.items];
  return { isIncomplete: fileList.isIncomplete || sessionList.isIncomplete, items };
}
