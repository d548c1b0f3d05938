import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openForeignStore } from '../../../server/src/store/engine/foreignStore';
import { ensureForeignHomes } from './foreignSessions';

const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-foreign-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('generated foreign homes', () => {
  it('hold a third each of Claude Code, Codex and Qwen Code sessions that the real stores list under their generated titles and cwds', async () => {
    const homes = ensureForeignHomes(path.join(dir, 'homes'), 6, 7, () => undefined);
    const claude = await openForeignStore('claude-code', homes.claudeHome).listSessions();
    const codex = await openForeignStore('codex', homes.codexHome).listSessions();
    const qwen = await openForeignStore('qwen-code', homes.qwenHome).listSessions();
    expect(claude).toHaveLength(2);
    expect(codex).toHaveLength(2);
    expect(qwen).toHaveLength(2);
    const expected = new Map(homes.labels);
    for (const session of [...claude, ...codex, ...qwen]) {
      expect(session.title).toBe(expected.get(session.id));
      expect(homes.cwds).toContain(session.cwd);
    }
    // Same knobs: reused as generated.
    expect(ensureForeignHomes(path.join(dir, 'homes'), 6, 7, () => undefined)).toEqual(homes);
  });
});
