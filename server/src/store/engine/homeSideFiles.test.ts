import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_PROJECT_INDEX_BYTES, MAX_TITLE_INDEX_TEXT_BYTES, type ProjectIndex, type TitleIndex } from '../formats/adapter';
import { codexFormat, codexThreadNames } from '../formats/codex';
import { geminiFormat } from '../formats/gemini';
import { fileIdentity } from '../transcriptFiles';
import { readProjectMarker, readProjectRegistry, readTitleIndex } from './homeSideFiles';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'home-side-files-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const NOTHING_READ = { identity: undefined, ids: new Set<string>() };

/** A title index of Codex's shape naming `names` (id → title). */
function writeTitleIndex(names: Record<string, string>): string {
  const file = path.join(dir, 'session_index.jsonl');
  writeFileSync(file, Object.entries(names).map(([id, thread_name]) => `${JSON.stringify({ id, thread_name, updated_at: '2026-01-01T00:00:00Z' })}\n`).join(''));
  return file;
}

/** An adapter's title index (text only) that counts the texts it is given. */
function countingTitles(): { titleIndex: TitleIndex; texts: string[] } {
  const texts: string[] = [];
  return { texts, titleIndex: { file: 'session_index.jsonl', titles: (text) => (texts.push(text), codexThreadNames(text)) } };
}

/** Gemini CLI's project index, counting the texts it parses. */
function countingProjects(): { projectIndex: ProjectIndex; texts: string[] } {
  const texts: string[] = [];
  const gemini = geminiFormat.projectIndex!;
  return {
    texts,
    projectIndex: { ...gemini, cwds: (text) => (texts.push(text), gemini.cwds(text)), markerCwd: (text) => (texts.push(text), gemini.markerCwd(text)) },
  };
}

describe('reading the title index', () => {
  it('returns the titles of the wanted ids only, with the identity read', async () => {
    const file = writeTitleIndex({ a: 'Alpha', b: 'Beta' });
    const read = await readTitleIndex(codexFormat.titleIndex!, file, NOTHING_READ, new Set(['a']));
    expect(read).toEqual({ identity: fileIdentity(statSync(file)), titles: new Map([['a', 'Alpha']]) });
  });

  it('reads nothing while the identity is the one read and that read covered every wanted id', async () => {
    const file = writeTitleIndex({ a: 'Alpha', b: 'Beta' });
    const { titleIndex, texts } = countingTitles();
    const before = { identity: fileIdentity(statSync(file)), ids: new Set(['a', 'b']) };
    expect(await readTitleIndex(titleIndex, file, before, new Set(['a']))).toBe('unchanged');
    expect(texts).toEqual([]);
    // A session the last read did not keep titles for: read again.
    expect(await readTitleIndex(titleIndex, file, { ...before, ids: new Set(['a']) }, new Set(['a', 'b']))).toMatchObject({ titles: new Map([['a', 'Alpha'], ['b', 'Beta']]) });
    expect(texts).toHaveLength(1);
  });

  it('gives no titles from a text-only index over the limit, nor from a damaged one, nor from none', async () => {
    const { titleIndex, texts } = countingTitles();
    const file = writeTitleIndex({ a: 'Alpha' });
    writeFileSync(file, `${JSON.stringify({ id: 'a', thread_name: 'Alpha' })}\n${' '.repeat(MAX_TITLE_INDEX_TEXT_BYTES)}\n`);
    expect(await readTitleIndex(titleIndex, file, NOTHING_READ, new Set(['a']))).toEqual({ identity: fileIdentity(statSync(file)), titles: new Map() });
    expect(texts).toEqual([]);
    writeFileSync(file, '{"id": "a", "thread_na\u0000\n[[[\n');
    expect(await readTitleIndex(codexFormat.titleIndex!, file, NOTHING_READ, new Set(['a']))).toEqual({ identity: fileIdentity(statSync(file)), titles: new Map() });
    rmSync(file);
    expect(await readTitleIndex(codexFormat.titleIndex!, file, NOTHING_READ, new Set(['a']))).toEqual({ identity: undefined, titles: new Map() });
  });
});

describe('reading the project registry and markers', () => {
  it('returns the cwds by project folder, and reads nothing again while the identity is the one read', async () => {
    const file = path.join(dir, 'projects.json');
    writeFileSync(file, JSON.stringify({ projects: { '/home/u/proj': 'proj' } }));
    const { projectIndex, texts } = countingProjects();
    const read = await readProjectRegistry(projectIndex, file, undefined);
    expect(read).toEqual({ identity: fileIdentity(statSync(file)), cwds: new Map([['proj', '/home/u/proj']]) });
    expect(await readProjectRegistry(projectIndex, file, fileIdentity(statSync(file)))).toBe('unchanged');
    expect(texts).toHaveLength(1);
  });

  it('gives no cwds from a registry over the limit (unread), a damaged one or none', async () => {
    const file = path.join(dir, 'projects.json');
    const { projectIndex, texts } = countingProjects();
    writeFileSync(file, `${JSON.stringify({ projects: { '/home/u/proj': 'proj' } })}${' '.repeat(MAX_PROJECT_INDEX_BYTES)}`);
    expect(await readProjectRegistry(projectIndex, file, undefined)).toEqual({ identity: fileIdentity(statSync(file)), cwds: new Map() });
    expect(texts).toEqual([]);
    writeFileSync(file, '{"projects": {"/home/u/proj": "pro');
    expect(await readProjectRegistry(projectIndex, file, undefined)).toEqual({ identity: fileIdentity(statSync(file)), cwds: new Map() });
    rmSync(file);
    expect(await readProjectRegistry(projectIndex, file, undefined)).toEqual({ identity: undefined, cwds: new Map() });
  });

  it("returns a marker's cwd, nothing read again while unchanged, and no cwd from an oversized or missing one", async () => {
    const file = path.join(dir, '.project_root');
    writeFileSync(file, '/home/u/proj\n');
    const { projectIndex, texts } = countingProjects();
    expect(await readProjectMarker(projectIndex, file, undefined)).toEqual({ identity: fileIdentity(statSync(file)), cwd: '/home/u/proj' });
    expect(await readProjectMarker(projectIndex, file, fileIdentity(statSync(file)))).toBe('unchanged');
    expect(texts).toHaveLength(1);
    writeFileSync(file, `/home/u/proj${' '.repeat(MAX_PROJECT_INDEX_BYTES)}`);
    expect(await readProjectMarker(projectIndex, file, undefined)).toEqual({ identity: fileIdentity(statSync(file)), cwd: undefined });
    expect(texts).toHaveLength(1);
    rmSync(file);
    expect(await readProjectMarker(projectIndex, file, undefined)).toEqual({ identity: undefined, cwd: undefined });
  });
});
