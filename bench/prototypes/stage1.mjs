// Builds stage1.c with clang-14 and measures it over the raw transcripts of a sessions root (see stage1.c).
// Usage: node bench/prototypes/stage1.mjs <sessions root> [files=3000]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [root, count = '3000'] = process.argv.slice(2);
if (!root) throw new Error('usage: node bench/prototypes/stage1.mjs <sessions root> [files]');
const files = [];
for (const project of readdirSync(root))
  for (const session of readdirSync(path.join(root, project))) {
    const file = path.join(root, project, session, 'session.jsonl');
    if (existsSync(file)) files.push(file);
  }
const measured = files.slice(0, Number(count));
const data = Buffer.concat(measured.map((file) => readFileSync(file)));

const dir = mkdtempSync(path.join(os.tmpdir(), 'stage1-'));
const wasmFile = path.join(dir, 'stage1.wasm');
const source = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stage1.c');
execFileSync('clang-14', ['--target=wasm32', '-O3', '-msimd128', '-mbulk-memory', '-nostdlib', '-Wall', '-Werror', '-Wl,--no-entry', '-o', wasmFile, source]);
const wasm = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(wasmFile))).exports;
rmSync(dir, { recursive: true, force: true });

// The bytes, then room for one index entry per two bytes (a structural is at most every byte, in practice every ~5).
const base = wasm.buffer();
const index = (base + data.length + 64 + 15) & ~15;
const needed = index + 2 * data.length;
const have = wasm.memory.buffer.byteLength;
if (needed > have) wasm.grow(Math.ceil((needed - have) / 65536));
new Uint8Array(wasm.memory.buffer).set(data, base);
wasm.set_index(index);
const ms = (since) => Number(process.hrtime.bigint() - since) / 1e6;
console.log(`${measured.length} transcripts, ${(data.length / 1e6).toFixed(0)} MB`);
for (let round = 0; round < 5; round++) {
  wasm.reset();
  let since = process.hrtime.bigint();
  wasm.run(data.length);
  const stage1 = ms(since);
  since = process.hrtime.bigint();
  const walked = wasm.walk();
  const stage2 = ms(since);
  const mbs = (data.length / 1e6 / ((stage1 + stage2) / 1000)).toFixed(0);
  console.log(`round ${round}: stage 1 + index ${stage1.toFixed(1)} ms, walk ${stage2.toFixed(1)} ms, ${mbs} MB/s; structurals ${wasm.result(0)}, lines ${walked % 1e9}, walk errors ${Math.floor(walked / 1e9)}, control bytes in strings ${wasm.result(1)}`);
}
