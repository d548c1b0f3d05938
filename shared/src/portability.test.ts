import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The shared package runs in the server, the VS Code client and browsers alike: no Node-only API.
const SOURCE_DIR = fileURLToPath(new URL('.', import.meta.url));
const NODE_ONLY = [
  { what: 'Buffer', pattern: /\bBuffer\b/ },
  { what: 'require(', pattern: /\brequire\s*\(/ },
  { what: "from 'node:", pattern: /\bfrom\s*['"]node:/ },
  { what: "import('node:", pattern: /\bimport\s*\(\s*['"]node:/ },
];

const sources = readdirSync(SOURCE_DIR)
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
  .sort();

describe('shared package portability', () => {
  it('finds the shared sources', () => {
    expect(sources).toContain('index.ts');
    expect(sources).toContain('uri.ts');
  });

  it.each(sources)('%s uses no Node-only API', (name) => {
    const text = readFileSync(join(SOURCE_DIR, name), 'utf8');
    const found = NODE_ONLY.filter(({ pattern }) => pattern.test(text)).map(({ what }) => what);
    expect(found).toEqual([]);
  });

  it('would catch a Node-only API', () => {
    const offending = ["import { x } from 'node:fs';", 'const b = Buffer.from(s);', "const m = require('m');"];
    for (const line of offending) expect(NODE_ONLY.some(({ pattern }) => pattern.test(line))).toBe(true);
  });
});
