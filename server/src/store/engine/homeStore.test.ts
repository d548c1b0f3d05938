import { appendFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_TITLE_INDEX_TEXT_BYTES, type FormatAdapter, type TitleFold } from '../formats/adapter';
import { codexFormat, codexThreadNames } from '../formats/codex';
import type { JsonlRecord } from '../formats/records';
import { openHomeStore } from './homeStore';

// Codex's home as codex-cli 0.171.0 wrote it: test/agent-stores/tools/generate.mjs.
const CODEX = fileURLToPath(new URL('../../../../test/agent-stores/fixtures/codex/', import.meta.url));
const RENAMED = '01a23b79-3e7d-7300-91e8-4b425fbbb44a';

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function codexHome(): string {
  const home = mkdtempSync(path.join(os.tmpdir(), 'home-walk-'));
  scratch.push(home);
  cpSync(CODEX, home, { recursive: true });
  return home;
}

/** The first listing of a store of `home` in `format`: id → title. */
async function titlesAfterWalk(format: FormatAdapter, home: string): Promise<Map<string, string | undefined>> {
  const store = openHomeStore(format, home, {});
  try {
    return new Map((await store.listSessions()).map((row) => [row.id, row.title]));
  } finally {
    store.dispose();
  }
}

describe('the title index through the disk engine', () => {
  it('keeps the titles of the sessions listed only: the fold is asked for no other id', async () => {
    const home = codexHome();
    appendFileSync(path.join(home, 'session_index.jsonl'), `${JSON.stringify({ id: 'not-a-session', thread_name: 'Nobody', updated_at: '2030-01-01T00:00:00Z' })}\n`);
    const asked: string[] = [];
    const kept: string[] = [];
    const watching: FormatAdapter = {
      ...codexFormat,
      titleIndex: {
        ...codexFormat.titleIndex!,
        newFold: (wanted) => {
          const fold = codexFormat.titleIndex!.newFold!(wanted);
          return {
            add: (record: JsonlRecord) => {
              const id = String(record.value.id);
              asked.push(id);
              if (wanted(id)) kept.push(id);
              fold.add(record);
            },
            titles: () => fold.titles(),
          } satisfies TitleFold;
        },
      },
    };
    const titles = await titlesAfterWalk(watching, home);
    expect(titles.get(RENAMED)).toBe('Lexer work, renamed');
    expect(asked).toContain('not-a-session');
    expect(kept).not.toContain('not-a-session');
    expect(new Set(kept)).toEqual(new Set([...kept].filter((id) => titles.has(id))));
  });

  it('an adapter without a title fold gets the whole text of a small index, and no titles from one over the limit', async () => {
    const textOnly: FormatAdapter = { ...codexFormat, titleIndex: { file: 'session_index.jsonl', titles: codexThreadNames } };
    const home = codexHome();
    expect((await titlesAfterWalk(textOnly, home)).get(RENAMED)).toBe('Lexer work, renamed');
    const big = codexHome();
    appendFileSync(path.join(big, 'session_index.jsonl'), `${' '.repeat(MAX_TITLE_INDEX_TEXT_BYTES)}\n`);
    const titles = await titlesAfterWalk(textOnly, big);
    expect(titles.has(RENAMED)).toBe(true);
    expect(titles.get(RENAMED)).not.toBe('Lexer work, renamed');
    // The streaming adapter reads the same big index whole.
    expect((await titlesAfterWalk(codexFormat, big)).get(RENAMED)).toBe('Lexer work, renamed');
  });

  it('skips a line of the index too long to hold and reads the names after it', async () => {
    const home = codexHome();
    const index = path.join(home, 'session_index.jsonl');
    // Read, this rename (the latest) would win.
    writeFileSync(index, `{"id":"${RENAMED}","updated_at":"2030-01-01T00:00:00Z","thread_name":"${'n'.repeat(70 * 1024 * 1024)}"}\n`);
    appendFileSync(index, `${JSON.stringify({ id: RENAMED, thread_name: 'After the long line', updated_at: '2020-01-01T00:00:00Z' })}\n`);
    expect((await titlesAfterWalk(codexFormat, home)).get(RENAMED)).toBe('After the long line');
  });
});
