// Sizes and writes a 100,000-row `dshSession.candidates` answer with the server's wire encoder
// (server/dist, built by `npm run build`), as the LSP route makes it: rows that write their own
// JSON (`MentionCandidateOnWrite`). Prints each round's sizing and writing time, in one process.
// Usage: node bench/prototypes/encodeAnswer.mjs [rows=100000] [rounds=7]
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';

const require = createRequire(import.meta.url);
const { encodedMessage } = require('../../server/dist/wiring/jsonEncoder.js');
const { MentionCandidateOnWrite } = require('../../server/dist/resolver/candidates.js');

const [count = '100000', rounds = '7'] = process.argv.slice(2);
const titles = ['fix the flaky retry test', 'résumé parsing on call map', 'Área de trabalho: app', '日本語のタイトル', 'add retry with backoff [wip]', 'plain title number '];
const rows = [];
for (let i = 0; i < Number(count); i++) {
  const summary = { id: randomUUID(), createdAt: 1782315593429 + i * 1000, cwd: `/home/dev/src/project-${i % 997}/sub` };
  if (i % 11 !== 0) summary.title = titles[i % titles.length] + i;
  rows.push(new MentionCandidateOnWrite(summary));
}
const message = { jsonrpc: '2.0', id: 5, result: rows };
for (let round = 0; round < Number(rounds); round++) {
  const started = performance.now();
  const encoded = encodedMessage(message);
  const sized = performance.now();
  let bytes = 0;
  for (const chunk of encoded.chunks()) bytes += chunk.length;
  const written = performance.now();
  if (bytes !== encoded.byteLength) throw new Error(`sized ${encoded.byteLength} bytes, wrote ${bytes}`);
  console.log(`round ${round + 1}: size ${(sized - started).toFixed(0)} ms, write ${(written - sized).toFixed(0)} ms, ${(bytes / 1e6).toFixed(1)} MB`);
}
