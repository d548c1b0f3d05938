/**
 * dsh's discovery walking the other agents' session layouts: the fixture homes of
 * test/agent-stores/ find exactly what the home engine's full walk finds; scopes, pending scopes
 * and scoped keys of a 3-deep layout (Codex) and of a layout with a leaf name (Gemini CLI).
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeDirectoryFiles, type DirectoryFiles } from './directoryFiles';
import { discover, discoverRootLevel, DISCOVERY_REASONS, type DiscoveryResult } from './discovery';
import { layoutFileKeys } from '../testing/layoutFiles';
import type { FormatAdapter } from './formats/adapter';
import { claudeFormat } from './formats/claudeCode';
import { codexFormat } from './formats/codex';
import { geminiFormat } from './formats/gemini';
import { qwenCodeFormat } from './formats/qwenCode';
import { depthBelowBase, scopeOfChange, scopeOfKey, type DiscoveryScope } from './layoutScopes';
import { PendingScopes } from './pendingScopes';
import { ScopedKeys } from './scopedKeys';

const FIXTURES = fileURLToPath(new URL('../../../test/agent-stores/fixtures/', import.meta.url));

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'layout-walk-'));
  scratch.push(dir);
  return dir;
}

function write(home: string, rel: string, content = '{}\n'): void {
  const full = path.join(home, ...rel.split('/'));
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, content);
}

/** A copy of a fixture home, with entries no walk may take for sessions added. */
function homeOf(fixture: string, extras: readonly string[]): string {
  const home = path.join(tempDir(), 'home');
  cpSync(path.join(FIXTURES, fixture), home, { recursive: true });
  for (const rel of extras) write(home, rel);
  return home;
}

/** The scanner's way: the root's own level, then each project folder in it. */
async function discoverByProjects(home: string, format: FormatAdapter): Promise<{ level: DiscoveryResult; keys: string[] }> {
  const level = await discoverRootLevel(home, nodeDirectoryFiles, format);
  const keys: string[] = [];
  for (const dir of level.directories) {
    if (depthBelowBase(dir, 1) !== 1) continue;
    const found = await discover(home, { kind: 'dir', dir }, nodeDirectoryFiles, format);
    keys.push(...found.transcripts.map((t) => t.key));
  }
  return { level, keys: keys.sort() };
}

const CODEX_ROLLOUT = 'rollout-2026-12-03T10-35-31-01a23b79-3e7d-7300-91e8-4b425fbbb44a.jsonl';
const QWEN_SESSION = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5eff.jsonl';

/** Each layout's fixture homes, and entries beside their sessions that are none. */
const HOMES: { name: string; format: FormatAdapter; fixtures: string[]; extras: string[] }[] = [
  {
    name: 'Claude Code (projects/<p>/<id>.jsonl)',
    format: claudeFormat,
    fixtures: ['claude-code', 'damaged/claude-code'],
    extras: ['history.jsonl', 'projects/stray.jsonl', 'projects/-p-/notes.txt', 'projects/-p-/sub/deeper.jsonl'],
  },
  {
    name: 'Codex (sessions/YYYY/MM/DD/rollout-*.jsonl)',
    format: codexFormat,
    fixtures: ['codex', 'codex-zst', 'damaged/codex'],
    extras: ['history.jsonl', `sessions/2026/${CODEX_ROLLOUT}`, `sessions/2026/12/${CODEX_ROLLOUT}`, 'sessions/2026/12/04/notes.txt', `sessions/2026/12/04/x/${CODEX_ROLLOUT}`],
  },
  {
    name: 'Gemini CLI (tmp/<project>/chats/session-*.jsonl)',
    format: geminiFormat,
    fixtures: ['gemini'],
    extras: ['tmp/proj-a/logs/session-2026-12-06T10-34-e5000005.jsonl', 'tmp/proj-a/session-2026-12-06T10-34-f6000006.jsonl', 'tmp/proj-a/chats/notes.txt', 'tmp/session-x.jsonl'],
  },
  {
    name: 'Qwen Code (projects/<p>/chats/<id>.jsonl)',
    format: qwenCodeFormat,
    fixtures: ['qwen-code', 'damaged/qwen-code'],
    extras: [`projects/-p-/chats/archive/${QWEN_SESSION}`, `projects/-p-/${QWEN_SESSION}`, 'projects/-p-/other/notes.txt'],
  },
];

describe("dsh's discovery walking another agent's home", () => {
  for (const { name, format, fixtures, extras } of HOMES) {
    for (const fixture of fixtures) {
      it(`finds exactly the session files a plain listing finds in ${fixture}: ${name}`, async () => {
        const home = homeOf(fixture, extras);
        const expected = layoutFileKeys(format, home);
        expect(expected.length).toBeGreaterThan(0);
        const whole = await discover(home, { kind: 'root' }, nodeDirectoryFiles, format);
        expect(whole.transcripts.map((t) => t.key).sort()).toEqual(expected);
        expect(whole.problems).toEqual([]);
        const { level, keys } = await discoverByProjects(home, format);
        expect(keys).toEqual(expected);
        // The root's own level is the base and the project folders in it, nothing else of the home.
        expect(level.directories[0]).toBe(format.base);
        for (const dir of level.directories) expect(depthBelowBase(dir, 1)).toBeLessThanOrEqual(1);
        expect(level.transcripts).toEqual([]);
      });
    }
  }

  it('names the project folder by its key and the leaf folder by its name', async () => {
    const claude = await discover(homeOf('claude-code', []), { kind: 'root' }, nodeDirectoryFiles, claudeFormat);
    expect(claude.transcripts).toContainEqual({
      key: 'projects/-tmp-dsh-agent-fixtures-proj-a/7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01.jsonl',
      projectDir: 'projects/-tmp-dsh-agent-fixtures-proj-a',
      sessionDir: '-tmp-dsh-agent-fixtures-proj-a',
    });
    const codex = await discover(homeOf('codex', []), { kind: 'root' }, nodeDirectoryFiles, codexFormat);
    expect(codex.transcripts).toContainEqual({ key: `sessions/2026/12/03/${CODEX_ROLLOUT}`, projectDir: 'sessions/2026', sessionDir: '03' });
    expect(codex.directories.sort()).toEqual(['sessions', 'sessions/2026', 'sessions/2026/12', 'sessions/2026/12/03']);
    const gemini = await discover(homeOf('gemini', ['tmp/proj-a/logs/x.txt']), { kind: 'root' }, nodeDirectoryFiles, geminiFormat);
    expect(gemini.transcripts).toContainEqual({ key: 'tmp/proj/chats/session-2026-12-06T10-35-c3000003.jsonl', projectDir: 'tmp/proj', sessionDir: 'chats' });
    // Only the folders named like the leaf folders are watched at the leaf level.
    expect(gemini.directories.sort()).toEqual(['tmp', 'tmp/proj', 'tmp/proj-a', 'tmp/proj-a/chats', 'tmp/proj-c', 'tmp/proj-c/chats', 'tmp/proj/chats']);
  });

  it('finds nothing, and reports nothing, in a home without its base folder', async () => {
    const home = tempDir();
    write(home, 'history.jsonl');
    write(home, 'other/p/7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01.jsonl');
    const empty = { transcripts: [], seen: new Map(), problems: [], directories: [] };
    for (const format of [claudeFormat, codexFormat, geminiFormat, qwenCodeFormat]) {
      expect(await discover(home, { kind: 'root' }, nodeDirectoryFiles, format)).toEqual(empty);
      expect(await discoverRootLevel(home, nodeDirectoryFiles, format)).toEqual(empty);
      expect(await discover(home, { kind: 'dir', dir: `${format.base}/p` }, nodeDirectoryFiles, format)).toEqual(empty);
    }
  });

  it('never follows a link: a linked base, project folder or session file is reported, not walked', async () => {
    const elsewhere = homeOf('claude-code', []);
    const home = homeOf('claude-code', []);
    const project = 'projects/-tmp-dsh-agent-fixtures-proj-a';
    symlinkSync(path.join(elsewhere, ...project.split('/')), path.join(home, 'projects', 'linked-project'));
    symlinkSync(path.join(elsewhere, ...project.split('/'), '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01.jsonl'), path.join(home, ...project.split('/'), 'linked.jsonl'));
    const expected = layoutFileKeys(claudeFormat, home);
    const found = await discover(home, { kind: 'root' }, nodeDirectoryFiles, claudeFormat);
    expect(found.transcripts.map((t) => t.key).sort()).toEqual(expected);
    expect(expected.some((key) => key.includes('linked'))).toBe(false);
    expect(found.problems.sort((a, b) => (a.key < b.key ? -1 : 1))).toEqual([
      { key: 'projects/-tmp-dsh-agent-fixtures-proj-a/linked.jsonl', reason: DISCOVERY_REASONS.symlink },
      { key: 'projects/linked-project', reason: DISCOVERY_REASONS.symlink },
    ]);
    expect(found.directories).not.toContain('projects/linked-project');
    const linkedScope = await discover(home, { kind: 'dir', dir: 'projects/linked-project' }, nodeDirectoryFiles, claudeFormat);
    expect(linkedScope).toMatchObject({ transcripts: [], problems: [{ key: 'projects/linked-project', reason: DISCOVERY_REASONS.symlink }] });

    const linkedBase = tempDir();
    symlinkSync(path.join(elsewhere, 'projects'), path.join(linkedBase, 'projects'));
    const viaBase = await discover(linkedBase, { kind: 'root' }, nodeDirectoryFiles, claudeFormat);
    expect(viaBase).toMatchObject({ transcripts: [], directories: [], problems: [{ key: 'projects', reason: DISCOVERY_REASONS.symlink }] });
    expect((await discoverRootLevel(linkedBase, nodeDirectoryFiles, claudeFormat)).problems).toEqual([{ key: 'projects', reason: DISCOVERY_REASONS.symlink }]);
  });

  it('looks at one file of a listed leaf folder without listing the folder or looking at its other files', async () => {
    const home = homeOf('claude-code', []);
    const project = 'projects/-tmp-dsh-agent-fixtures-proj-a';
    for (let i = 0; i < 50; i++) write(home, `${project}/00000000-0000-0000-0000-${String(i).padStart(12, '0')}.jsonl`);
    const key = `${project}/7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01.jsonl`;
    const scope = scopeOfChange(claudeFormat, project, '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01.jsonl');
    expect(scope).toEqual({ kind: 'file', key });
    const listed: string[] = [];
    const looked: string[] = [];
    const recording: DirectoryFiles = {
      ...nodeDirectoryFiles,
      readdirSync: (dir) => (listed.push(dir), nodeDirectoryFiles.readdirSync!(dir)),
      readdir: (dir) => (listed.push(dir), nodeDirectoryFiles.readdir(dir)),
      lstatSync: (file) => (looked.push(path.relative(home, file)), nodeDirectoryFiles.lstatSync!(file)),
      lstat: (file) => (looked.push(path.relative(home, file)), nodeDirectoryFiles.lstat(file)),
    };
    const found = await discover(home, scope!, recording, claudeFormat);
    expect(found.transcripts).toEqual([{ key, projectDir: project, sessionDir: '-tmp-dsh-agent-fixtures-proj-a' }]);
    expect(found.seen.has(key)).toBe(true);
    expect(found.directories).toEqual([]);
    expect(listed).toEqual([]);
    expect(looked.map((rel) => rel.split(path.sep).join('/'))).toEqual(['projects', project, key]);
    // A file gone, or one named like no session: nothing.
    expect((await discover(home, { kind: 'file', key: `${project}/gone.jsonl` }, nodeDirectoryFiles, claudeFormat)).transcripts).toEqual([]);
    expect((await discover(home, { kind: 'file', key: `${project}/x.txt` }, nodeDirectoryFiles, claudeFormat)).transcripts).toEqual([]);
    expect(scopeOfKey(claudeFormat, key)).toEqual({ kind: 'file', key });
    // The whole folder, when the watch did not say which file changed.
    expect(scopeOfChange(claudeFormat, project, undefined)).toEqual({ kind: 'dir', dir: project });
    expect(readdirSync(path.join(home, ...project.split('/'))).length).toBe(51);
  });
});

describe('scopes of a 3-deep layout (Codex) and of a layout with a leaf name (Gemini CLI)', () => {
  it('maps a watch event to the scope to re-read', () => {
    const day = 'sessions/2026/12/03';
    expect(scopeOfChange(codexFormat, '', undefined)).toEqual({ kind: 'root' });
    expect(scopeOfChange(codexFormat, '', 'sessions')).toEqual({ kind: 'root' });
    // Another file at the top of the home holds no session.
    expect(scopeOfChange(codexFormat, '', 'history.jsonl')).toBeUndefined();
    expect(scopeOfChange(codexFormat, 'sessions', '2026')).toEqual({ kind: 'dir', dir: 'sessions/2026' });
    expect(scopeOfChange(codexFormat, 'sessions', undefined)).toEqual({ kind: 'dir', dir: 'sessions' });
    expect(scopeOfChange(codexFormat, 'sessions/2026', '12')).toEqual({ kind: 'dir', dir: 'sessions/2026/12' });
    expect(scopeOfChange(codexFormat, 'sessions/2026/12', '03')).toEqual({ kind: 'dir', dir: day });
    expect(scopeOfChange(codexFormat, day, CODEX_ROLLOUT)).toEqual({ kind: 'file', key: `${day}/${CODEX_ROLLOUT}` });
    expect(scopeOfChange(codexFormat, day, undefined)).toEqual({ kind: 'dir', dir: day });
    expect(scopeOfKey(codexFormat, `${day}/${CODEX_ROLLOUT}`)).toEqual({ kind: 'file', key: `${day}/${CODEX_ROLLOUT}` });

    expect(scopeOfChange(geminiFormat, '', 'projects.json')).toBeUndefined();
    expect(scopeOfChange(geminiFormat, '', 'tmp')).toEqual({ kind: 'root' });
    expect(scopeOfChange(geminiFormat, 'tmp', 'proj-a')).toEqual({ kind: 'dir', dir: 'tmp/proj-a' });
    expect(scopeOfChange(geminiFormat, 'tmp/proj-a', 'chats')).toEqual({ kind: 'dir', dir: 'tmp/proj-a/chats' });
    expect(scopeOfChange(geminiFormat, 'tmp/proj-a/chats', 'session-1.jsonl')).toEqual({ kind: 'file', key: 'tmp/proj-a/chats/session-1.jsonl' });
  });

  it('re-reads what a scope at any depth holds, and nothing outside it', async () => {
    const home = homeOf('codex', [`sessions/2026/12/04/${CODEX_ROLLOUT}`, `sessions/2026/11/30/${CODEX_ROLLOUT}`]);
    const keysOf = async (scope: DiscoveryScope) => (await discover(home, scope, nodeDirectoryFiles, codexFormat)).transcripts.map((t) => t.key).sort();
    expect(await keysOf({ kind: 'dir', dir: 'sessions/2026/12/04' })).toEqual([`sessions/2026/12/04/${CODEX_ROLLOUT}`]);
    expect(await keysOf({ kind: 'dir', dir: 'sessions/2026/12' })).toHaveLength(4);
    expect(await keysOf({ kind: 'dir', dir: 'sessions/2026' })).toHaveLength(5);
    expect(await keysOf({ kind: 'dir', dir: 'sessions' })).toEqual(await keysOf({ kind: 'root' }));
    const month = await discover(home, { kind: 'dir', dir: 'sessions/2026/11' }, nodeDirectoryFiles, codexFormat);
    expect(month.directories.sort()).toEqual(['sessions/2026/11', 'sessions/2026/11/30']);

    const gemini = homeOf('gemini', ['tmp/proj-a/logs/session-2026-12-06T10-34-e5000005.jsonl']);
    const geminiKeys = async (scope: DiscoveryScope) => (await discover(gemini, scope, nodeDirectoryFiles, geminiFormat)).transcripts.map((t) => t.key).sort();
    expect(await geminiKeys({ kind: 'dir', dir: 'tmp/proj-a' })).toEqual(['tmp/proj-a/chats/session-2026-12-06T10-34-a1000001.jsonl', 'tmp/proj-a/chats/session-2026-12-06T10-35-b2000002.jsonl']);
    // A folder at the leaf level of another name is no leaf folder, nor is a file in it a session.
    expect(await geminiKeys({ kind: 'dir', dir: 'tmp/proj-a/logs' })).toEqual([]);
    expect(await geminiKeys({ kind: 'file', key: 'tmp/proj-a/logs/session-2026-12-06T10-34-e5000005.jsonl' })).toEqual([]);
    expect(await geminiKeys({ kind: 'file', key: 'tmp/proj-a/chats/session-2026-12-06T10-34-a1000001.jsonl' })).toEqual(['tmp/proj-a/chats/session-2026-12-06T10-34-a1000001.jsonl']);
  });

  it('coalesces pending scopes and finds a scope\'s keys by their project folder', () => {
    const pending = new PendingScopes();
    const day = 'sessions/2026/12/03';
    for (const change of [
      scopeOfChange(codexFormat, day, CODEX_ROLLOUT),
      scopeOfChange(codexFormat, 'sessions/2026', '12'),
      scopeOfChange(geminiFormat, 'tmp/proj-a/chats', 'session-1.jsonl'),
      scopeOfChange(geminiFormat, 'tmp/proj-a/chats', 'session-1.jsonl'),
    ]) {
      pending.add(change!);
    }
    expect(pending.take()).toEqual([
      { kind: 'dir', dir: 'sessions/2026/12' },
      { kind: 'file', key: 'tmp/proj-a/chats/session-1.jsonl' },
    ]);

    const keys = new ScopedKeys(1);
    const all = ['sessions', 'sessions/2026', 'sessions/2026/12', day, `${day}/a.jsonl`, `${day}/b.jsonl`, 'sessions/2026/11/30/c.jsonl', 'sessions/2025/01/01/d.jsonl'];
    for (const key of all) keys.add(key);
    expect(keys.projects().sort()).toEqual(['sessions', 'sessions/2025', 'sessions/2026']);
    expect(keys.inScope({ kind: 'dir', dir: day }).sort()).toEqual([day, `${day}/a.jsonl`, `${day}/b.jsonl`]);
    expect(keys.inScope({ kind: 'dir', dir: 'sessions/2026/12' }).sort()).toEqual(['sessions/2026/12', day, `${day}/a.jsonl`, `${day}/b.jsonl`]);
    expect(keys.inScope({ kind: 'dir', dir: 'sessions' }).sort()).toEqual([...all].sort());
    expect(keys.inScope({ kind: 'file', key: `${day}/a.jsonl` })).toEqual([`${day}/a.jsonl`]);
    expect(keys.inScope({ kind: 'file', key: `${day}/z.jsonl` })).toEqual([]);
  });
});
