import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openForeignStore } from '../../../server/src/store/engine/openForeignStore';
import { ensureForeignHomes } from './foreignSessions';

const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-foreign-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('generated foreign homes', () => {
  it('hold Claude Code, Codex, Qwen Code, Gemini CLI and (with node:sqlite) opencode sessions that the real stores list under their generated titles and cwds', async () => {
    const homes = ensureForeignHomes(path.join(dir, 'homes'), 20, 7, () => undefined);
    const stores = [openForeignStore('claude-code', homes.claudeHome), openForeignStore('codex', homes.codexHome), openForeignStore('qwen-code', homes.qwenHome), openForeignStore('gemini', homes.geminiHome)];
    if (homes.opencodeHome !== undefined) stores.push(openForeignStore('opencode', homes.opencodeHome));
    // opencode's home is made exactly where this Node can read it.
    expect(homes.opencodeHome !== undefined).toBe(process.getBuiltinModule?.('node:sqlite') !== undefined);
    const perAgent = homes.opencodeHome === undefined ? 5 : 4;
    const listings = await Promise.all(stores.map((store) => store.listSessions()));
    for (const listing of listings) expect(listing).toHaveLength(perAgent);
    const expected = new Map(homes.labels);
    expect(expected.size).toBe(20);
    for (const session of listings.flat()) {
      expect(session.title).toBe(expected.get(session.id));
      expect(homes.cwds).toContain(session.cwd);
    }
    for (const store of stores) store.dispose();
    // Same knobs: reused as generated.
    expect(ensureForeignHomes(path.join(dir, 'homes'), 20, 7, () => undefined)).toEqual(homes);
  });
});
