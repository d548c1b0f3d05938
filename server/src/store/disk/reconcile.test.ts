/**
 * Reconciliation on its own, without a file system: what a discovery result does to the index,
 * the known directories and the problems, and the change it returns.
 */
import { describe, expect, it } from 'vitest';
import type { DiscoveryResult, TranscriptLocation } from '../discovery';
import { ScopedKeys } from '../scopedKeys';
import type { CachedSummary } from '../summaryCache';
import { nodeTranscriptFiles } from '../transcriptFiles';
import { TranscriptIndex } from '../transcriptIndex';
import { claudeFormat } from '../formats/claudeCode';
import { applyRootLevel, applyScope } from './reconcile';
import type { RootContents } from './state';

function location(key: string): TranscriptLocation {
  const [projectDir, sessionDir] = key.split('/');
  return { key, projectDir, sessionDir };
}

/** What discovery found: a project scope's directories name the project itself too. */
function found(keys: string[], directories: string[], problems: DiscoveryResult['problems'] = []): DiscoveryResult {
  return { transcripts: keys.map(location), seen: new Map(), problems, directories };
}

/** An attached root whose index holds `keys` (nothing is read: adding a key reads no file). */
function attachedWith(keys: string[]): RootContents {
  const index = new TranscriptIndex('/root', nodeTranscriptFiles, 1);
  const directories = new ScopedKeys();
  for (const key of keys) {
    index.add(location(key));
    const [project, session] = key.split('/');
    directories.add(project);
    directories.add(`${project}/${session}`);
  }
  return { index, directories, discoveryProblems: new Map() } as unknown as RootContents;
}

const noCache = (): CachedSummary | undefined => undefined;

describe('reconciliation', () => {
  it('returns nothing changed when a scope holds what the index knows', async () => {
    const attached = attachedWith(['p/a/session.jsonl']);
    const change = await applyScope(attached, { kind: 'dir', dir: 'p' }, found(['p/a/session.jsonl'], ['p', 'p/a']), noCache);
    expect(change).toEqual({ listingChanged: false, removed: false, directoriesChanged: false });
  });

  it('returns what a scope lost and gained, and applies it', async () => {
    const attached = attachedWith(['p/a/session.jsonl', 'p/b/session.jsonl', 'q/c/session.jsonl']);
    const scope = { kind: 'dir', dir: 'p' } as const;
    const problem = { key: 'p/x', reason: 'not a directory' };
    const change = await applyScope(attached, scope, found(['p/a/session.jsonl', 'p/d/session.jsonl'], ['p', 'p/a', 'p/d'], [problem]), noCache);
    expect(change).toEqual({ listingChanged: true, removed: true, directoriesChanged: true });
    expect([...attached.index.keys()].sort()).toEqual(['p/a/session.jsonl', 'p/d/session.jsonl', 'q/c/session.jsonl']);
    expect([...attached.directories].sort()).toEqual(['p', 'p/a', 'p/d', 'q', 'q/c']);
    expect([...attached.discoveryProblems.values()]).toEqual([problem]);
    // A new problem alone changes the listing (it is reported), nothing else.
    const again = await applyScope(attached, scope, found(['p/a/session.jsonl', 'p/d/session.jsonl'], ['p', 'p/a', 'p/d']), noCache);
    expect(again).toEqual({ listingChanged: true, removed: false, directoriesChanged: false });
  });

  it('forgets at the root level what lay in project directories that are gone', () => {
    const attached = attachedWith(['p/a/session.jsonl', 'q/c/session.jsonl']);
    const change = applyRootLevel(attached, found([], ['q', 'r']));
    expect(change).toEqual({ listingChanged: true, removed: true, directoriesChanged: true });
    expect([...attached.index.keys()]).toEqual(['q/c/session.jsonl']);
    expect([...attached.directories].sort()).toEqual(['q', 'q/c', 'r']);
    expect(applyRootLevel(attached, found([], ['q', 'r']))).toEqual({ listingChanged: false, removed: false, directoriesChanged: false });
  });

  it("forgets at the root level of an agent's home what lay in project folders of its base that are gone", async () => {
    // Claude Code's layout: projects/<p>/<id>.jsonl; nothing is read.
    const format = { layout: claudeFormat, cache: { rootName: (root: string) => root, keepsResume: false }, readFacts: () => Promise.reject(new Error('not read')), mayResume: () => false };
    const index = new TranscriptIndex('/home', nodeTranscriptFiles, 1, format);
    const directories = new ScopedKeys(1);
    const attached = { index, directories, discoveryProblems: new Map() } as unknown as RootContents;
    for (const key of ['projects/p/x.jsonl', 'projects/q/y.jsonl']) index.add({ key, projectDir: key.slice(0, key.lastIndexOf('/')), sessionDir: key.split('/')[1]! });
    for (const dir of ['projects', 'projects/p', 'projects/q']) directories.add(dir);
    attached.discoveryProblems.set('projects/p/z.jsonl', { key: 'projects/p/z.jsonl', reason: 'link' });
    attached.discoveryProblems.set('projects/gone', { key: 'projects/gone', reason: 'link' });
    const change = applyRootLevel(attached, found([], ['projects', 'projects/q', 'projects/r']), 1);
    expect(change).toEqual({ listingChanged: true, removed: true, directoriesChanged: true });
    expect(index.keys()).toEqual(['projects/q/y.jsonl']);
    expect([...directories].sort()).toEqual(['projects', 'projects/q', 'projects/r']);
    expect([...attached.discoveryProblems.keys()]).toEqual([]);
    // A file's scope: that file alone, gone.
    expect(await applyScope(attached, { kind: 'file', key: 'projects/q/y.jsonl' }, found([], []), noCache)).toMatchObject({ removed: true });
    expect(index.keys()).toEqual([]);
  });
});
