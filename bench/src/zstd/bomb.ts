/**
 * What the bound on a zstd log's total plaintext costs: the time to read a zstd bomb (a header
 * frame, then 16 frames of 128 KiB RLE blocks, 1,000 MiB of `\n` each: 0.5 MB on disk) to its
 * too-large answer, with the longest the event loop waited meanwhile; and the store's summarizer
 * on an ordinary dsh-shaped zstd log with the bound and without it.
 */
import { SessionLogSummarizer } from 'dsh-session-ls/dist/store/log/summarizer';
import { initZstdSupport } from 'dsh-session-ls/dist/store/log/zstdDecoder';
import { Corpus } from '../generate/corpus';
import { execFileSync } from 'node:child_process';
import { ZSTD_CLI_ARGS, builtinZstdCompressor, likeDshFrame } from '../generate/dshLog';
import { Random } from '../generate/random';
import { generateSessionLog, type SessionSpec } from '../generate/sessionLog';

/** What {@link measureBoundCost} found. */
export interface BoundCost {
  bombBytes: number;
  /** Reading the bomb to its answer (median of the runs), ms. */
  bombMs: number;
  /** The longest the event loop waited while the bomb was read, ms. */
  longestStallMs: number;
  bombAnswer: string;
  ordinaryBytes: number;
  ordinaryPlaintextBytes: number;
  /** The ordinary log summarized with the bound and with none (medians), ms. */
  boundedMs: number;
  unboundedMs: number;
}

const builtin = builtinZstdCompressor();

/** One zstd frame of `bytes` as dsh writes it (node:zlib when it has zstd, else the `zstd` command). */
function zstdFrameOf(bytes: Uint8Array): Uint8Array {
  if (builtin !== undefined) return new Uint8Array(builtin(bytes));
  return likeDshFrame(new Uint8Array(execFileSync('zstd', ZSTD_CLI_ARGS, { input: bytes, maxBuffer: 1 << 30 })));
}

const concatBytes = (parts: readonly Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));

function rleFrame(mib: number): Uint8Array {
  const blocks = mib * 8;
  const body = new Uint8Array(blocks * 4);
  for (let i = 0; i < blocks; i++) {
    const blockHeader = ((128 * 1024) << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0);
    body.set([blockHeader & 0xff, (blockHeader >> 8) & 0xff, blockHeader >> 16, 0x0a], i * 4);
  }
  return concatBytes([Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58]), body]);
}

/** The bomb of the module comment. */
export function zstdBomb(frames = 16, mib = 1000): Uint8Array {
  const header = JSON.stringify({ type: 'session', version: 0, id: 'bomb', createdAt: 1, cwd: '/bench', delegationDepth: 0 });
  const frame = rleFrame(mib);
  return concatBytes([zstdFrameOf(Buffer.from(`${header}\n`)), ...Array.from({ length: frames }, () => frame)]);
}

/** An ordinary dsh-shaped log of about `targetBytes` (the bench's generator; one frame per batch). */
function ordinaryLog(targetBytes: number): { bytes: Uint8Array; plaintext: number } {
  const spec: SessionSpec = { id: 'ordinary', cwd: '/bench', createdAt: 1, targetBytes, openTail: false, untitled: false };
  const log = generateSessionLog(spec, new Random(7), new Corpus(7));
  const parts = [log.header, ...log.batches];
  const plaintext = parts.reduce((sum, part) => sum + Buffer.byteLength(part), 0);
  return { bytes: concatBytes(parts.map((part) => zstdFrameOf(Buffer.from(part)))), plaintext };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Reads `bytes` with the store's summarizer in 256 KiB pushes that yield; the time and the answer. */
async function summarize(bytes: Uint8Array, maxPlaintextBytes?: number): Promise<{ ms: number; answer: string }> {
  const summarizer = new SessionLogSummarizer('zstd', maxPlaintextBytes === undefined ? {} : { maxPlaintextBytes });
  const started = performance.now();
  for (let at = 0; at < bytes.length; at += 256 * 1024) await summarizer.pushAsync(bytes.subarray(at, at + 256 * 1024));
  const summary = summarizer.summary();
  return { ms: performance.now() - started, answer: summary.error?.reason ?? `title ${summary.title ?? '(none)'}` };
}

/** Measures {@link BoundCost} (`runs` of each). */
export async function measureBoundCost(runs = 3): Promise<BoundCost> {
  await initZstdSupport();
  const bomb = zstdBomb();
  const bombTimes: number[] = [];
  let longestStallMs = 0;
  let bombAnswer = '';
  for (let run = 0; run < runs; run++) {
    let last = performance.now();
    let ticking = true;
    const tick = (): void => {
      if (!ticking) return; // a turn after the read is not the read's
      const now = performance.now();
      longestStallMs = Math.max(longestStallMs, now - last);
      last = now;
      setImmediate(tick);
    };
    setImmediate(tick);
    const { ms, answer } = await summarize(bomb);
    ticking = false;
    bombTimes.push(ms);
    bombAnswer = answer;
  }
  const ordinary = ordinaryLog(8_000_000);
  const bounded: number[] = [];
  const unbounded: number[] = [];
  await summarize(ordinary.bytes); // warm-up
  for (let run = 0; run < 2 * runs + 1; run++) {
    // Alternating which goes first, so neither pays the other's garbage.
    const pair = [() => summarize(ordinary.bytes).then(({ ms }) => bounded.push(ms)), () => summarize(ordinary.bytes, Number.MAX_SAFE_INTEGER).then(({ ms }) => unbounded.push(ms))];
    if (run % 2 === 1) pair.reverse();
    for (const measure of pair) await measure();
  }
  return {
    bombBytes: bomb.length,
    bombMs: median(bombTimes),
    longestStallMs,
    bombAnswer,
    ordinaryBytes: ordinary.bytes.length,
    ordinaryPlaintextBytes: ordinary.plaintext,
    boundedMs: median(bounded),
    unboundedMs: median(unbounded),
  };
}

/** The rows for the results. */
export function renderBoundCost(cost: BoundCost): string {
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
  return [
    '',
    '## The bound on a zstd log\'s plaintext',
    '',
    '| measurement | value |',
    '|---|---|',
    `| zstd bomb (${mb(cost.bombBytes)}, 16 × 1,000 MiB of RLE newlines) read to its answer (${cost.bombAnswer}), median | ${cost.bombMs.toFixed(0)} ms; the event loop waited ≤ ${cost.longestStallMs.toFixed(0)} ms |`,
    `| ordinary zstd log (${mb(cost.ordinaryBytes)}, ${mb(cost.ordinaryPlaintextBytes)} plaintext) summarized with the bound / without, medians | ${cost.boundedMs.toFixed(1)} / ${cost.unboundedMs.toFixed(1)} ms |`,
    '',
  ].join('\n');
}
