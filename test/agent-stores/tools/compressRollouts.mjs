// Derives test/agent-stores/fixtures/codex-zst/ from the Codex fixture home: the same home with every
// rollout rewritten as `rollout-….jsonl.zst`, as recent Codex versions rewrite idle rollouts (one
// zstd frame per file, the plain `.jsonl` removed). Uses the `zstd` CLI. generate.mjs runs it after
// writing the fixtures; run it alone with `node test/agent-stores/tools/compressRollouts.mjs`.
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const source = path.join(fixtures, 'codex');
const target = path.join(fixtures, 'codex-zst');
rmSync(target, { recursive: true, force: true });
cpSync(source, target, { recursive: true });
const rollouts = readdirSync(path.join(target, 'sessions'), { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && /^rollout-.*\.jsonl$/.test(entry.name))
  .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
for (const file of rollouts) {
  // -q: quiet; --rm: remove the source once compressed; -f: replace an older .zst.
  const result = spawnSync('zstd', ['-q', '-f', '--rm', file, '-o', `${file}.zst`], { encoding: 'utf8' });
  if (result.error !== undefined || result.status !== 0) throw new Error(`zstd failed on ${file}: ${result.error?.message ?? result.stderr}`);
}
process.stdout.write(`${rollouts.length} rollouts compressed into ${target}\n`);
