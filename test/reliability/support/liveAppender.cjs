'use strict';
// Child process for the live-writer tests: a stand-in for dsh appending to session logs. It reads a
// plan (JSON: steps of { file, pieces: [base64...] }) and appends each piece with a short pause, so
// readers see every state: between batches, and inside a torn line or frame.
const { appendFileSync, readFileSync } = require('node:fs');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
  let pieces = 0;
  for (const step of plan.steps) {
    for (const piece of step.pieces) {
      appendFileSync(step.file, Buffer.from(piece, 'base64'));
      pieces++;
      await sleep(plan.pauseMs);
    }
  }
  process.stdout.write(JSON.stringify({ pieces }) + '\n');
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack) + '\n');
  process.exit(1);
});
