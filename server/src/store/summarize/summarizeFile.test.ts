import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findProgram, fixtureStore } from '../../../../test/support/conformance';
import { DEMO_2, concatBytes, ev, headerLine, rawTranscript, zstdFrame, zstdTranscript } from '../../testing/testLogs';
import { nodeTranscriptFiles, type TranscriptFiles } from '../transcriptFiles';
import { HEADER_REASONS, mayResume, summarizeTranscriptFile, withReadBuffer, type SummarizeOutcome, type SummarizeTask } from './summarizeFile';

const zstdCli = findProgram('zstd');
const dir = mkdtempSync(path.join(os.tmpdir(), 'dsh-summarize-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
function writeLog(bytes: Uint8Array | string, name = `log-${fileCount++}`): string {
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return file;
}

function summaryOf(outcome: SummarizeOutcome): Extract<SummarizeOutcome, { kind: 'summary' }> {
  if (outcome.kind !== 'summary') throw new Error(`expected a summary, got ${JSON.stringify(outcome)}`);
  return outcome;
}

/** The task that continues `outcome` (as the index builds it). */
function continuation(file: string, encoding: SummarizeTask['encoding'], outcome: SummarizeOutcome): SummarizeTask {
  const done = summaryOf(outcome);
  return { file, encoding, previous: { ...done.opened, size: done.position }, saved: mayResume(done.summary) ? done.saved : undefined };
}

const titled = [...DEMO_2, ev.title(17, 'Renamed again')];

describe('summarizeTranscriptFile', () => {
  it('reads a whole raw log: header, title, counts, and state to resume from', async () => {
    const file = writeLog(rawTranscript(DEMO_2));
    const outcome = summaryOf(await summarizeTranscriptFile({ file, encoding: 'raw' }));
    expect(outcome.summary.header).toEqual({ id: 'demo-2', createdAt: 1767225700000, cwd: '/home/alice/proj' });
    expect(outcome.summary.title).toBe('Alpha file check');
    expect(outcome.summary.eventCount).toBe(DEMO_2.length - 1);
    expect(outcome.position).toBe(outcome.opened.size);
    expect(outcome.resumed).toBe(false);
    expect(outcome.saved?.summarizer.version).toBe(1);
    // The digest of the bytes the state covers (all of them: the last line is complete).
    expect(outcome.saved?.prefixSha256).toBe(createHash('sha256').update(rawTranscript(DEMO_2)).digest('hex'));
  });

  it('reads a raw log of many read chunks, lines across every chunk boundary, as parsing every line does', async () => {
    // Lines of every length around the 256 KiB reads: a line begun in one read ends in a later one.
    const lines = [headerLine('many-chunks'), ev.turnStart(0), ev.stepStart(1)];
    for (let seq = 2; lines.join('\n').length < 1_500_000; seq++) {
      lines.push(seq % 7 === 0 ? ev.title(seq, `title ${seq}`) : ev.of('assistant/chunk', seq, { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x'.repeat((seq * 7919) % 90_000) } }));
    }
    const bytes = rawTranscript(lines);
    const outcome = summaryOf(await summarizeTranscriptFile({ file: writeLog(bytes), encoding: 'raw' }));
    expect(outcome.summary.bodyError).toBeUndefined();
    expect(outcome.summary.headerProblem).toBeUndefined();
    // Every event, and the closers of the turn left open.
    expect(outcome.summary.eventCount).toBe(lines.length - 1 + 2);
    expect(outcome.summary.title).toBe(`title ${lines.length - 1 - ((lines.length - 1) % 7)}`);
    const parsed = await summarizeTranscriptFile({ file: writeLog(bytes), encoding: 'raw' }, nodeTranscriptFiles, { skimLines: false });
    expect(outcome.summary).toEqual(summaryOf(parsed).summary);
  });

  it('gives plain data only (a structured clone is identical, classes included)', async () => {
    const damaged = writeLog(concatBytes([rawTranscript(DEMO_2.slice(0, 4)), new TextEncoder().encode('{"type":\n'), rawTranscript(DEMO_2.slice(4))]));
    for (const file of [writeLog(rawTranscript(DEMO_2)), damaged, path.join(dir, 'missing')]) {
      const outcome = await summarizeTranscriptFile({ file, encoding: 'raw' });
      expect(structuredClone(outcome)).toStrictEqual(outcome);
    }
  });

  it('continues an append from the saved state, as a read from scratch would', async () => {
    const file = writeLog(rawTranscript(DEMO_2.slice(0, 6)));
    const first = await summarizeTranscriptFile({ file, encoding: 'raw' });
    appendFileSync(file, rawTranscript(titled.slice(6)));
    const resumed = summaryOf(await summarizeTranscriptFile(continuation(file, 'raw', first)));
    const scratch = summaryOf(await summarizeTranscriptFile({ file, encoding: 'raw' }));
    expect(resumed.resumed).toBe(true);
    expect(resumed.summary.title).toBe('Renamed again');
    expect({ ...resumed, resumed: false }).toEqual(scratch);
  });

  it('completes a torn raw tail when the rest of the line arrives', async () => {
    const whole = rawTranscript(titled);
    const cut = whole.length - 20;
    const file = writeLog(whole.subarray(0, cut));
    const torn = summaryOf(await summarizeTranscriptFile({ file, encoding: 'raw' }));
    expect(torn.summary.title).toBe('Alpha file check'); // the torn title line is not read yet
    expect(torn.position).toBe(cut);
    appendFileSync(file, whole.subarray(cut));
    const done = summaryOf(await summarizeTranscriptFile(continuation(file, 'raw', torn)));
    expect(done.resumed).toBe(true);
    expect(done.summary.title).toBe('Renamed again');
  });

  it('keeps no state behind a huge unterminated line (its bytes are not copied for the digest), and reads it again whole', async () => {
    const head = rawTranscript(titled);
    const huge = new TextEncoder().encode('{"type":"user/message","seq":99,"data":"' + 'x'.repeat(5 * 1024 * 1024));
    const file = writeLog(concatBytes([head, huge]));
    const torn = summaryOf(await summarizeTranscriptFile({ file, encoding: 'raw' }));
    expect(torn.summary.title).toBe('Renamed again');
    expect(torn.saved).toBeUndefined();
    // A short torn tail still leaves a state to resume from.
    const short = summaryOf(await summarizeTranscriptFile({ file: writeLog(concatBytes([head, huge.subarray(0, 1000)])), encoding: 'raw' }));
    expect(short.saved?.prefixSha256).toBe(createHash('sha256').update(head).digest('hex'));
  });

  it.skipIf(!zstdCli.found)(`completes a torn zstd frame when the rest arrives ${zstdCli.reason ?? ''}`, async () => {
    const head = zstdTranscript([DEMO_2.slice(0, 1), DEMO_2.slice(1, 6)]);
    const last = zstdFrame(titled.slice(6));
    const file = writeLog(concatBytes([head, last.subarray(0, 10)]));
    const torn = summaryOf(await summarizeTranscriptFile({ file, encoding: 'zstd' }));
    expect(torn.summary.header?.id).toBe('demo-2');
    expect(torn.summary.title).toBe('Read a.txt');
    appendFileSync(file, last.subarray(10));
    const done = summaryOf(await summarizeTranscriptFile(continuation(file, 'zstd', torn)));
    const scratch = summaryOf(await summarizeTranscriptFile({ file, encoding: 'zstd' }));
    expect(done.resumed).toBe(true);
    expect(done.summary.title).toBe('Renamed again');
    expect({ ...done, resumed: false }).toEqual(scratch);
  });

  it('keeps no state after body damage, so the next read starts over (damage is sticky)', async () => {
    const file = writeLog(concatBytes([rawTranscript(DEMO_2.slice(0, 4)), new TextEncoder().encode('{"type":\n'), rawTranscript(DEMO_2.slice(4))]));
    const damaged = summaryOf(await summarizeTranscriptFile({ file, encoding: 'raw' }));
    expect(damaged.summary.bodyError?.reason).toBe('corrupt');
    expect(damaged.saved).toBeUndefined();
    expect(mayResume(damaged.summary)).toBe(false);
    appendFileSync(file, rawTranscript([ev.title(17, 'After damage')]));
    const again = summaryOf(await summarizeTranscriptFile(continuation(file, 'raw', damaged)));
    expect(again.resumed).toBe(false);
    expect(again.summary.bodyError?.reason).toBe('corrupt');
  });

  it('reports an incomplete header as resumable, and an invalid one as not', async () => {
    const partial = summaryOf(await summarizeTranscriptFile({ file: writeLog(headerLine('h-1').slice(0, 30)), encoding: 'raw' }));
    expect(partial.summary.headerProblem).toBe(HEADER_REASONS.incomplete);
    expect(partial.saved).toBeDefined();
    const invalid = summaryOf(await summarizeTranscriptFile({ file: writeLog('{"type":"nonsense"}\n'), encoding: 'raw' }));
    expect(invalid.summary.headerProblem).toMatch(/^invalid session header: /);
    expect(invalid.saved).toBeUndefined();
  });

  it('reads from scratch when the file shrank or was replaced', async () => {
    const file = writeLog(rawTranscript(titled));
    const first = await summarizeTranscriptFile({ file, encoding: 'raw' });
    truncateSync(file, rawTranscript(DEMO_2.slice(0, 5)).length);
    const shrunk = summaryOf(await summarizeTranscriptFile(continuation(file, 'raw', first)));
    expect(shrunk.resumed).toBe(false);
    expect(shrunk.summary.title).toBe('Read a.txt');

    const replacement = writeLog(rawTranscript(titled));
    renameSync(replacement, file); // a new inode, longer than before
    const replaced = summaryOf(await summarizeTranscriptFile(continuation(file, 'raw', shrunk)));
    expect(replaced.resumed).toBe(false);
    expect(replaced.summary.title).toBe('Renamed again');
  });

  it('reads from scratch a file rewritten in place that grew (bytes before the resume point changed), raw', async () => {
    const file = writeLog(rawTranscript(DEMO_2.slice(0, 6)));
    const first = continuation(file, 'raw', await summarizeTranscriptFile({ file, encoding: 'raw' }));
    // The same inode, longer: one byte inside the prompt changed, a title line added.
    const rewritten = Buffer.from(rawTranscript(titled)).toString('utf8').replace('"title":"Read a.txt"', '"title":"Read b.txt"');
    writeFileSync(file, rewritten);
    const outcome = summaryOf(await summarizeTranscriptFile(first));
    const scratch = summaryOf(await summarizeTranscriptFile({ file, encoding: 'raw' }));
    expect(outcome).toMatchObject({ resumed: false, notResumed: 'prefix-changed' });
    expect({ ...outcome, notResumed: undefined }).toEqual({ ...scratch, notResumed: undefined });
    // A state that is resumed after a real append stays right.
    appendFileSync(file, rawTranscript([ev.title(18, 'Appended')]));
    const appended = summaryOf(await summarizeTranscriptFile(continuation(file, 'raw', outcome)));
    expect(appended).toMatchObject({ resumed: true, summary: { title: 'Appended' } });
    expect(appended.notResumed).toBeUndefined();
  });

  it.skipIf(!zstdCli.found)(`reads from scratch a zstd file rewritten in place that grew ${zstdCli.reason ?? ''}`, async () => {
    const file = writeLog(zstdTranscript([DEMO_2.slice(0, 1), DEMO_2.slice(1, 6)]));
    const first = continuation(file, 'zstd', await summarizeTranscriptFile({ file, encoding: 'zstd' }));
    // Another second frame (another title), then a third: longer, same inode.
    const other = DEMO_2.slice(1, 6).map((line) => line.replace('"Read a.txt"', '"Read c.txt"'));
    expect(other).not.toEqual(DEMO_2.slice(1, 6));
    writeFileSync(file, zstdTranscript([DEMO_2.slice(0, 1), other, DEMO_2.slice(6, 13)]));
    const outcome = summaryOf(await summarizeTranscriptFile(first));
    const scratch = summaryOf(await summarizeTranscriptFile({ file, encoding: 'zstd' }));
    expect(outcome).toMatchObject({ resumed: false, notResumed: 'prefix-changed', summary: { title: 'Read c.txt' } });
    expect({ ...outcome, notResumed: undefined }).toEqual({ ...scratch, notResumed: undefined });
  });

  it('reads from scratch when the saved state is unusable', async () => {
    const file = writeLog(rawTranscript(DEMO_2.slice(0, 6)));
    const first = continuation(file, 'raw', await summarizeTranscriptFile({ file, encoding: 'raw' }));
    appendFileSync(file, rawTranscript(titled.slice(6)));
    const outcome = summaryOf(await summarizeTranscriptFile({ ...first, saved: { summarizer: { version: 1, reader: { nonsense: true } }, prefixSha256: '' } as never }));
    expect(outcome.resumed).toBe(false);
    expect(outcome.notResumed).toBe('unusable');
    const withoutDigest = summaryOf(await summarizeTranscriptFile({ ...first, saved: { summarizer: first.saved?.summarizer } as never }));
    expect(withoutDigest.notResumed).toBe('unusable');
    expect(outcome.summary.title).toBe('Renamed again');
  });

  it('stops at the bytes present when the file shrinks while being read', async () => {
    const bytes = rawTranscript(titled);
    const file = writeLog(bytes);
    // The opened file claims to be longer than the bytes it has (as if truncated after fstat).
    const claimingMore: TranscriptFiles = {
      ...nodeTranscriptFiles,
      async open(name) {
        const handle = await nodeTranscriptFiles.open(name);
        return { ...handle, stat: async () => Object.assign(await handle.stat(), { size: bytes.length + 4096 }) };
      },
    };
    const outcome = summaryOf(await summarizeTranscriptFile({ file, encoding: 'raw' }, claimingMore));
    expect(outcome.opened.size).toBe(bytes.length + 4096);
    expect(outcome.position).toBe(bytes.length);
    expect(outcome.summary.title).toBe('Renamed again');
  });

  it('fails (never throws) for a missing file, with its errno code, and for a link', async () => {
    const missing = await summarizeTranscriptFile({ file: path.join(dir, 'nothing-here'), encoding: 'raw' });
    expect(missing).toMatchObject({ kind: 'failed', error: { reason: 'io', code: 'ENOENT' } });
    const link = path.join(dir, 'a-link');
    symlinkSync(writeLog(rawTranscript(DEMO_2)), link);
    const linked = await summarizeTranscriptFile({ file: link, encoding: 'raw' });
    expect(linked.kind).toBe('failed');
  });

  describe('parsing every line or skimming the fixture store', () => {
    /** Every transcript of the fixture store in `encoding`, whole and cut at a third and at two thirds. */
    function fixtureLogs(encoding: 'raw' | 'zstd'): Array<{ name: string; bytes: Uint8Array }> {
      const store = fixtureStore(encoding);
      const logs: Array<{ name: string; bytes: Uint8Array }> = [];
      for (const project of readdirSync(store)) {
        for (const session of readdirSync(path.join(store, project))) {
          for (const file of readdirSync(path.join(store, project, session))) {
            const bytes = readFileSync(path.join(store, project, session, file));
            const name = `${encoding}/${project}/${session}/${file}`;
            logs.push({ name, bytes }, { name: `${name} (1/3)`, bytes: bytes.subarray(0, Math.floor(bytes.length / 3)) });
            logs.push({ name: `${name} (2/3)`, bytes: bytes.subarray(0, Math.floor((2 * bytes.length) / 3)) });
          }
        }
      }
      return logs;
    }

    it.each(['raw', 'zstd'] as const)('gives the same outcome, resume state included, on every %s fixture log', async (encoding) => {
      const logs = fixtureLogs(encoding);
      expect(logs.length).toBeGreaterThan(6);
      for (const { name, bytes } of logs) {
        const file = writeLog(bytes);
        const task: SummarizeTask = { file, encoding: name.includes('.zstd') ? 'zstd' : 'raw' };
        const skimmed = await summarizeTranscriptFile(task);
        expect(await summarizeTranscriptFile(task, nodeTranscriptFiles, { skimLines: false }), name).toEqual(skimmed);
      }
    });

    it('continues a state saved by one way with the other, as a read from scratch would', async () => {
      let resumedCount = 0;
      for (const { name, bytes } of fixtureLogs('raw').filter((log) => !log.name.includes('/3)') && !log.name.includes('.zstd'))) {
        const file = writeLog(bytes.subarray(0, Math.floor(bytes.length / 2)));
        const first = await summarizeTranscriptFile({ file, encoding: 'raw' });
        writeFileSync(file, bytes);
        const scratch = summaryOf(await summarizeTranscriptFile({ file, encoding: 'raw' }));
        const resumed = summaryOf(await summarizeTranscriptFile(continuation(file, 'raw', first), nodeTranscriptFiles, { skimLines: false }));
        expect({ ...resumed, resumed: false, notResumed: undefined }, name).toEqual({ ...scratch, notResumed: undefined });
        if (resumed.resumed) resumedCount++;
      }
      expect(resumedCount).toBeGreaterThan(3);
    });
  });
});

describe('withReadBuffer', () => {
  it('hands the next read the buffer the last one released, and reads that overlap each their own', async () => {
    const first = await withReadBuffer(async (buffer) => buffer);
    const second = await withReadBuffer(async (buffer) => buffer);
    expect(second).toBe(first);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inner: Uint8Array | undefined;
    const outer = withReadBuffer(async (buffer) => {
      inner = await withReadBuffer(async (other) => other);
      await held;
      return buffer;
    });
    await Promise.resolve();
    release();
    const outerBuffer = await outer;
    expect(inner).toBeInstanceOf(Uint8Array);
    expect(inner).not.toBe(outerBuffer);
    // Released even when the read throws.
    const thrown = await withReadBuffer(async (buffer) => {
      throw Object.assign(new Error('read failed'), { buffer });
    }).catch((error: { buffer: Uint8Array }) => error.buffer);
    expect(await withReadBuffer(async (buffer) => buffer)).toBe(thrown);
  });

  it('summarizes files read one after another into the same buffer as each alone', async () => {
    const big = rawTranscript([headerLine('big-1'), ev.turnStart(0), ev.user(1, 'x'.repeat(400_000)), ev.title(2, 'Big'), ev.turnEnd(3)]);
    const small = rawTranscript([headerLine('small-1'), ev.turnStart(0), ev.user(1, 'p'), ev.title(2, 'Small'), ev.turnEnd(3)]);
    const files = [writeLog(big), writeLog(small), writeLog(big)];
    const outcomes = [];
    for (const file of files) outcomes.push(summaryOf(await summarizeTranscriptFile({ file, encoding: 'raw' })).summary);
    expect(outcomes.map((summary) => [summary.title, summary.eventCount, summary.bodyError])).toEqual([
      ['Big', 4, undefined],
      ['Small', 4, undefined],
      ['Big', 4, undefined],
    ]);
  });
});
