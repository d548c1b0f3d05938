/**
 * Where a root-relative key lies in a session layout (`formats/adapter.ts`), and which part of
 * a root to look at again: the whole root, one folder with everything below it, or one session
 * file. Generic over the layout: dsh's root (`<project>/<session>/<file>`, base '') and an
 * agent's home (`projects/<p>/<id>.jsonl`, `sessions/YYYY/MM/DD/rollout-*.jsonl`,
 * `tmp/<project>/chats/session-*.json`) alike. Keys are `/`-separated and never start with `/`.
 */
import type { SessionLayout } from './formats/adapter';

/** Which part of the root to look at: all of it, one folder and what lies below it, or one session file. */
export type DiscoveryScope = { kind: 'root' } | { kind: 'dir'; dir: string } | { kind: 'file'; key: string };

/** How many segments the layout's base has (0 when the base is the root). */
export function baseDepthOf(layout: Pick<SessionLayout, 'base'>): number {
  const { base } = layout;
  if (base === '') return 0;
  let segments = 1;
  for (let i = base.indexOf('/'); i !== -1; i = base.indexOf('/', i + 1)) segments++;
  return segments;
}

/** The folder a root-relative key lies in ('' for a key directly in the root). */
export function parentKey(key: string): string {
  const slash = key.lastIndexOf('/');
  return slash === -1 ? '' : key.slice(0, slash);
}

/**
 * Depth below the base of a key that lies under it (0: the base, 1: a folder directly in it);
 * counted up to `cap` levels below the base (a deeper key answers `cap + 1`).
 */
export function depthBelowBase(key: string, baseDepth: number, cap = Infinity): number {
  if (key === '') return -baseDepth;
  let depth = 1 - baseDepth;
  for (let i = key.indexOf('/'); i !== -1 && depth <= cap; i = key.indexOf('/', i + 1)) depth++;
  return depth;
}

/**
 * The project folder a key lies in: the key cut after the folder one level below the base
 * (dsh: `<project>`, a home: e.g. `projects/<p>`); a key no deeper is its own project.
 */
export function projectKeyOf(key: string, baseDepth: number): string {
  let slash = key.indexOf('/');
  for (let n = 0; n < baseDepth && slash !== -1; n++) slash = key.indexOf('/', slash + 1);
  return slash === -1 ? key : key.slice(0, slash);
}

/** Whether `dir` is a folder above the base (the root of an agent's home), on the way to it. */
function aboveBase(layout: SessionLayout, dir: string): boolean {
  return dir !== layout.base && (dir === '' || layout.base.startsWith(`${dir}/`));
}

/** Whether a root-relative key lies inside a scope (a folder scope's own folder included). */
export function inScope(key: string, scope: DiscoveryScope): boolean {
  if (scope.kind === 'root') return true;
  if (scope.kind === 'file') return key === scope.key;
  const { dir } = scope;
  return key.startsWith(dir) && (key.length === dir.length || key.charCodeAt(dir.length) === 47 /* '/' */);
}

/**
 * What to re-read after a watch on root-relative folder `dir` saw entry `name` change (`name`
 * unknown: the whole folder); undefined when nothing there holds sessions (another file at the
 * top of an agent's home). Above the leaf folders: that entry's folder. In a leaf folder: the one
 * file, when the layout lists its leaf folders (a folder of thousands of session files is not
 * stat'ed again for one append); the leaf folder, when it is looked up by fixed names (dsh).
 */
export function scopeOfChange(layout: SessionLayout, dir: string, name: string | undefined): DiscoveryScope | undefined {
  if (aboveBase(layout, dir)) {
    if (name === undefined) return { kind: 'root' };
    const child = dir === '' ? name : `${dir}/${name}`;
    return child === layout.base || layout.base.startsWith(`${child}/`) ? { kind: 'root' } : undefined;
  }
  if (dir === '') return name === undefined ? { kind: 'root' } : { kind: 'dir', dir: name };
  if (name === undefined) return { kind: 'dir', dir };
  const depth = depthBelowBase(dir, baseDepthOf(layout), layout.leafDepth);
  if (depth < layout.leafDepth) return { kind: 'dir', dir: `${dir}/${name}` };
  return layout.sessionFileNames === undefined && depth === layout.leafDepth ? { kind: 'file', key: `${dir}/${name}` } : { kind: 'dir', dir };
}

/** What to look at again when the session file `key` went (or changed kind): the file, or (dsh) its session folder. */
export function scopeOfKey(layout: SessionLayout, key: string): DiscoveryScope {
  return layout.sessionFileNames === undefined ? { kind: 'file', key } : { kind: 'dir', dir: parentKey(key) };
}

/** Whether a folder key (under the base) is a leaf folder, one that holds session files. */
export function isLeafFolder(layout: SessionLayout, baseDepth: number, dir: string): boolean {
  return depthBelowBase(dir, baseDepth, layout.leafDepth) >= layout.leafDepth;
}
