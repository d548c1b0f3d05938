import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_FOREIGN_FILE_BYTES } from '../formats/adapter';
import { isDatabaseAdapter } from '../formats/database';
import { formatOf } from '../formats/registry';
import { fileIdentity } from '../transcriptFiles';
import { foreignCacheRoot } from './foreignCache';
import { foreignIndexFormat } from './foreignFormat';
import { nodeForeignFiles, type ForeignFiles } from './foreignRead';

// A session written by the real CLI (test/agent-stores/tools/generate.mjs).
const SESSION = fileURLToPath(
  new URL('../../../../test/agent-stores/fixtures/claude-code/projects/-tmp-dsh-agent-fixtures-proj-a/7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01.jsonl', import.meta.url),
);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'foreign-format-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Reads `file` (root-relative `key` under `dir`) for the index, as the home walk asks. */
function request(key: string, extra: { previous?: ReturnType<typeof fileIdentity>; resume?: never } = {}) {
  const file = path.join(dir, key);
  const identity = fileIdentity(statSync(file));
  return { root: dir, key, file, identity, keepState: true, bytes: identity.size, ...extra };
}

describe('a foreign format as an index format', () => {
  const adapter = formatOf('claude-code');
  if (isDatabaseAdapter(adapter)) throw new Error("Claude Code's adapter reads session files");
  const claude = adapter;

  it('gives a session its facts as the index keeps them (header and title), and the fold an append resumes from equals a read of the whole file', async () => {
    const lines = readFileSync(SESSION, 'utf8').split('\n').filter((line) => line !== '');
    const format = foreignIndexFormat(claude);
    mkdirSync(path.join(dir, 'a'));
    mkdirSync(path.join(dir, 'b'));
    writeFileSync(path.join(dir, 'a', 's.jsonl'), lines.slice(0, 5).map((line) => `${line}\n`).join(''));
    const first = await format.readFacts(request('a/s.jsonl'), undefined);
    expect(first.kind).toBe('read');
    if (first.kind !== 'read') return;
    writeFileSync(path.join(dir, 'a', 's.jsonl'), lines.map((line) => `${line}\n`).join(''));
    const appended = await format.readFacts({ ...request('a/s.jsonl'), previous: first.identity, resume: first.resume! }, first.facts);
    copyFileSync(path.join(dir, 'a', 's.jsonl'), path.join(dir, 'b', 's.jsonl'));
    const whole = await format.readFacts(request('b/s.jsonl'), undefined);
    expect(appended).toMatchObject({ kind: 'read', resumed: true });
    expect(whole).toMatchObject({ kind: 'read', resumed: false });
    if (appended.kind !== 'read' || whole.kind !== 'read') return;
    const row = claude.summarize(path.join(dir, 'b', 's.jsonl'), readFileSync(SESSION, 'utf8'), 0)!;
    expect(appended.facts).toEqual({ header: { id: row.id, cwd: row.cwd, createdAt: row.createdAt }, title: row.title, capturedThroughSeq: null, eventCount: 0 });
    expect(appended.facts.headerProblem).toBeUndefined();
    expect(appended.facts).toEqual(whole.facts);
  });

  it('says why a file lists no session: no session records, or too large (then it is not opened)', async () => {
    const opened: string[] = [];
    const files: ForeignFiles = { open: (file) => (opened.push(path.basename(file)), nodeForeignFiles.open(file)) };
    const format = foreignIndexFormat(claude, files);
    writeFileSync(path.join(dir, 'empty.jsonl'), 'not json\n');
    expect(await format.readFacts(request('empty.jsonl'), undefined)).toMatchObject({ kind: 'read', facts: { headerProblem: 'no session records', capturedThroughSeq: null, eventCount: 0 } });
    writeFileSync(path.join(dir, 'big.jsonl'), '');
    const big = { ...request('big.jsonl') };
    const tooLarge = await format.readFacts({ ...big, identity: { ...big.identity, size: MAX_FOREIGN_FILE_BYTES + 1 } }, undefined);
    expect(tooLarge).toMatchObject({ kind: 'read', facts: { headerProblem: 'too large to read', capturedThroughSeq: null, eventCount: 0 } });
    expect(opened).toEqual(['empty.jsonl']);
  });

  it("is cached under the agent's own name for the home, never the home's path, keeping no fold state", () => {
    const { cache } = foreignIndexFormat(claude);
    expect(cache.rootName('/home/u/.claude')).toBe(foreignCacheRoot('claude-code', '/home/u/.claude'));
    expect(cache.rootName('/home/u/.claude')).not.toBe('/home/u/.claude');
    expect(cache.keepsResume).toBe(false);
  });

  it('returns a failure to open or read as an outcome, never a throw', async () => {
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    const format = foreignIndexFormat(claude, { open: () => Promise.reject(denied) });
    writeFileSync(path.join(dir, 's.jsonl'), readFileSync(SESSION));
    expect(await format.readFacts(request('s.jsonl'), undefined)).toEqual({ kind: 'failed', error: denied });
  });
});
