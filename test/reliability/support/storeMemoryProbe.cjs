'use strict';
// Child process for the memory-bound tests: open the BUILT store over a root, index it, list it and
// read the given sessions, then report what it got and the process's peak RSS growth (Linux
// /proc/self/status: VmHWM = peak resident set, VmRSS = current) as one JSON line on stdout.
// With `--together` before the ids, the sessions are all read at once, while the store indexes;
// `--foreign=FILE` (before them) also reads another agent's session file as a surface read does, at once.
const { readFileSync } = require('node:fs');
const path = require('node:path');

function statusKb(field) {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) : NaN;
}

async function main() {
  const [root, ...args] = process.argv.slice(2);
  const foreignFile = args[0] && args[0].startsWith('--foreign=') ? args[0].slice('--foreign='.length) : undefined;
  const rest = foreignFile === undefined ? args : args.slice(1);
  const together = rest[0] === '--together';
  const ids = together ? rest.slice(1) : rest;
  const { readForeignRecords } = require(path.resolve(__dirname, '../../../server/dist/store/engine/foreignRecords.js'));
  const { openSessionStore } = require(path.resolve(__dirname, '../../../server/dist/store/index.js'));
  // Warm up what any read needs (modules, wasm) on an empty root, so the baseline includes it.
  global.gc?.();
  const baselineKb = statusKb('VmRSS');
  const store = openSessionStore({ root, log: () => undefined });
  const reads = {};
  const read = async (id) => {
    try {
      const surface = await store.readSurface(id);
      reads[id] = { ok: true, events: surface.events.length, capturedThroughSeq: surface.capturedThroughSeq };
    } catch (error) {
      reads[id] = { ok: false, name: error && error.name, reason: error && error.reason, message: String(error && error.message).slice(0, 200) };
    }
  };
  let foreign;
  const readForeign = async () => {
    const records = await readForeignRecords(foreignFile);
    foreign = { lines: records.map((record) => record.line) };
  };
  if (together) await Promise.all([...ids.map(read), ...(foreignFile === undefined ? [] : [readForeign()])]);
  await store.whenIndexed();
  const listed = (await store.listSessions()).map((s) => ({ id: s.id, title: s.title }));
  if (!together) for (const id of ids) await read(id);
  store.dispose();
  const peakKb = statusKb('VmHWM');
  process.stdout.write(JSON.stringify({ listed, reads, foreign, baselineKb, peakKb, growthKb: peakKb - baselineKb }) + '\n');
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack) + '\n');
  process.exit(1);
});
