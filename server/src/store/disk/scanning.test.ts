/**
 * The scanner over another agent's home: the root scan (the root's own level, then each project
 * folder of the layout's base), folder and file scopes and the scope a vanished file makes stale,
 * on a layout three folders deep (Codex) and one whose leaf folders are the project folders
 * (Claude Code). Files are never read here (the format fails every read).
 */
import { cpSync, mkdtempSync, rmSync, statSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { layoutFileKeys } from '../../testing/layoutFiles';
import type { FormatAdapter } from '../formats/adapter';
import type { EngineFormat } from '../formats/engineFormat';
import { claudeFormat } from '../formats/claudeCode';
import { codexFormat } from '../formats/codex';
import { scopeOfChange, type DiscoveryScope } from '../layoutScopes';
import type { DirectoryWatches } from '../directoryWatches';
import { StoreEvents, type StoreEvent } from './events';
import { Scanner } from './scanning';
import { StoreState, type Attached } from './state';
import { DEFAULT_TUNING } from './tuning';

const FIXTURES = fileURLToPath(new URL('../../../../test/agent-stores/fixtures/', import.meta.url));
const CODEX_ROLLOUT = 'rollout-2026-12-03T10-35-31-01a23b79-3e7d-7300-91e8-4b425fbbb44a.jsonl';

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function homeOf(fixture: string): string {
  const home = path.join(mkdtempSync(path.join(os.tmpdir(), 'scanning-')), 'home');
  scratch.push(path.dirname(home));
  cpSync(path.join(FIXTURES, fixture), home, { recursive: true });
  return home;
}

/** A scanner of `home` in `format`'s layout, its attached root and the scopes it made stale. */
function scannerOf(home: string, format: FormatAdapter) {
  const state = new StoreState(home, DEFAULT_TUNING, () => undefined);
  const events = new StoreEvents();
  const stale: DiscoveryScope[] = [];
  events.consume((event: StoreEvent) => {
    if (event.type === 'scopeStale') stale.push(event.scope);
  });
  const reader = { layout: format, readFacts: () => Promise.resolve({ kind: 'failed', error: new Error('not read here') }), mayResume: () => false };
  const cache = { adopt: () => undefined, loaded: () => Promise.resolve() };
  const scanner = new Scanner(state, events, cache, reader as unknown as EngineFormat);
  const { dev, ino } = statSync(home);
  const attached: Attached = scanner.open({ retired: false, realRoot: home, rootIdentity: { dev, ino }, watches: {} as DirectoryWatches });
  state.finishIndexing();
  return { scanner, attached, stale };
}

describe("the scanner over an agent's home", () => {
  it('scans a 3-deep layout by project folder, then follows a new folder, a gone file and a stale one', async () => {
    const home = homeOf('codex');
    const { scanner, attached, stale } = scannerOf(home, codexFormat);
    await scanner.scan(attached, { kind: 'root' });
    const keys = layoutFileKeys(codexFormat, home);
    expect(attached.index.keys().sort()).toEqual(keys);
    expect([...attached.directories].sort()).toEqual(['sessions', 'sessions/2026', 'sessions/2026/12', 'sessions/2026/12/03']);

    // A new day folder: the watch on its month names it.
    cpSync(path.join(home, 'sessions/2026/12/03', CODEX_ROLLOUT), path.join(home, 'sessions/2026/12/04', CODEX_ROLLOUT), { recursive: true });
    await scanner.scan(attached, scopeOfChange(codexFormat, 'sessions/2026/12', '04')!);
    expect(attached.index.keys()).toContain(`sessions/2026/12/04/${CODEX_ROLLOUT}`);
    expect([...attached.directories]).toContain('sessions/2026/12/04');

    // A file gone: the watch on its day names that file alone.
    unlinkSync(path.join(home, 'sessions/2026/12/04', CODEX_ROLLOUT));
    await scanner.scan(attached, scopeOfChange(codexFormat, 'sessions/2026/12/04', CODEX_ROLLOUT)!);
    expect(attached.index.keys().sort()).toEqual(keys);
    expect([...attached.directories]).toContain('sessions/2026/12/04');

    // A file that vanished under a refresh makes that file's scope stale.
    const gone = keys[0]!;
    unlinkSync(path.join(home, ...gone.split('/')));
    expect(await scanner.refresh(attached, gone)).toBe('gone');
    expect(stale).toEqual([{ kind: 'file', key: gone }]);
  });

  it('forgets a project folder that went at the next root scan, and scans one whose leaf folders are its project folders', async () => {
    const home = homeOf('claude-code');
    const { scanner, attached } = scannerOf(home, claudeFormat);
    await scanner.scan(attached, { kind: 'root' });
    const keys = layoutFileKeys(claudeFormat, home);
    expect(attached.index.keys().sort()).toEqual(keys);
    const project = 'projects/-tmp-dsh-agent-fixtures-proj-a';
    expect(attached.index.get(keys.find((key) => key.startsWith(`${project}/`))!)?.location).toMatchObject({ projectDir: project, sessionDir: '-tmp-dsh-agent-fixtures-proj-a' });
    rmSync(path.join(home, ...project.split('/')), { recursive: true });
    await scanner.scan(attached, { kind: 'root' });
    expect(attached.index.keys().sort()).toEqual(keys.filter((key) => !key.startsWith(`${project}/`)));
    expect([...attached.directories]).not.toContain(project);
    expect([...attached.directories]).toContain('projects');
    // The base gone: nothing left.
    rmSync(path.join(home, 'projects'), { recursive: true });
    await scanner.scan(attached, { kind: 'root' });
    expect(attached.index.keys()).toEqual([]);
    expect([...attached.directories]).toEqual([]);
  });
});
