/**
 * Freshness scheduling on its own, in fake time and without a file system: the debounce of watch
 * events, the rescan's spacing by its own cost, the sweep's pacing, and the quiet during the
 * first index.
 */
import type { Stats } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FakeClock, yieldTurns } from '../../testing/fakeClock';
import type { SessionLayout } from '../formats/adapter';
import { codexFormat } from '../formats/codex';
import { dshLayout } from '../formats/dshLayout';
import type { DiscoveryScope } from '../layoutScopes';
import { ScopedKeys } from '../scopedKeys';
import type { FileIdentity, TranscriptFiles } from '../transcriptFiles';
import type { IndexedTranscript } from '../transcriptIndex';
import { StoreEvents, type StoreEvent } from './events';
import { Freshness } from './freshness';
import { StoreState, type Attached } from './state';
import { DEFAULT_TUNING, type DiskStoreTuning } from './tuning';

const IDENTITY: FileIdentity = { size: 10, mtimeMs: 1, ctimeMs: 1, ino: 1, dev: 1 };

function statsOf(identity: FileIdentity): Stats {
  return { ...identity, isFile: () => true } as unknown as Stats;
}

/**
 * A Freshness over an attached root of `keys` (`<project>/<session>/session.jsonl`), none of
 * whose directories is watched except `watched`; scans and refreshes are recorded, not run.
 */
function setUp(tuning: Partial<DiskStoreTuning>, keys: string[] = [], watched: string[] = [], lstatCostMs = 0, layout: SessionLayout = dshLayout) {
  const events = new StoreEvents();
  const emitted: StoreEvent['type'][] = [];
  events.consume((event) => emitted.push(event.type));
  let rootAttached = true;
  const clock = new FakeClock();
  const lstatSyncs: string[] = [];
  const lstatTimes: number[] = [];
  const onDisk = new Map<string, FileIdentity>(keys.map((key) => [`/root/${key}`, IDENTITY]));
  const files: TranscriptFiles = {
    ...DEFAULT_TUNING.files,
    lstatSync(file) {
      lstatSyncs.push(file.slice('/root/'.length));
      lstatTimes.push(clock.now());
      clock.elapse(lstatCostMs);
      return statsOf(onDisk.get(file) ?? IDENTITY);
    },
  };
  const state = new StoreState('/root', { ...DEFAULT_TUNING, clock, files, ...tuning }, () => undefined);
  const entries = new Map<string, IndexedTranscript>(
    keys.map((key) => [key, { location: { key, projectDir: key.split('/')[0], sessionDir: key.split('/')[1] }, identity: IDENTITY }]),
  );
  const attached = {
    retired: false,
    realRoot: '/root',
    index: {
      failedKeys: () => [],
      keys: () => [...entries.keys()],
      get: (key: string) => entries.get(key),
      all: () => entries.values(),
    },
    watches: { update: (dirs: Iterable<string>) => watchUpdates.push([...dirs]), isWatched: (dir: string) => watched.includes(dir) },
    directories: new ScopedKeys(),
  } as unknown as Attached;
  const flushes: number[] = [];
  const watchUpdates: string[][] = [];
  const scans: DiscoveryScope[][] = [];
  const refreshes: string[] = [];
  let scanCost = { ms: 0, cpuMs: 0 };
  const freshness = new Freshness(state, events, {
    async scan(_attached, scope) {
      (scans.at(-1) as DiscoveryScope[]).push(scope);
      clock.advance(scanCost.ms);
      clock.cpu += scanCost.cpuMs;
    },
    async refresh(_attached, key) {
      refreshes.push(key);
      onDisk.set(`/root/${key}`, IDENTITY); // read: the index knows this version now
      return 'changed' as const;
    },
    async rootStillAttached() {
      flushes.push(clock.now());
      scans.push([]);
      return rootAttached;
    },
  }, layout);
  freshness.setRoot(attached);
  return {
    clock,
    state,
    attached,
    freshness,
    flushes,
    scans,
    refreshes,
    lstatSyncs,
    lstatTimes,
    onDisk,
    costs: (ms: number, cpuMs: number) => (scanCost = { ms, cpuMs }),
    emitted,
    replaceRoot: () => (rootAttached = false),
    watchUpdates,
  };
}

/** Advances fake time in steps, letting each step's flush finish. */
async function advance(clock: FakeClock, ms: number, step = ms): Promise<void> {
  for (let done = 0; done < ms; done += step) {
    clock.advance(Math.min(step, ms - done));
    await yieldTurns();
  }
}

describe('freshness scheduling in fake time', () => {
  it('reads a burst of watch events once after a quiet time, never postponed past the longest debounce', async () => {
    const { clock, state, attached, freshness, flushes, scans } = setUp({ debounceMs: 30, maxDebounceMs: 200 });
    state.indexing = false;
    const start = clock.now();
    // An event every 20 ms for half a second: never 30 ms of quiet.
    for (let t = 0; t < 500; t += 20) {
      freshness.onWatchEvent(attached, 'p/s', 'session.jsonl');
      await advance(clock, 20);
    }
    await advance(clock, 100);
    expect(flushes.map((t) => t - start)).toEqual([200, 400, 510]);
    for (const scopes of scans) expect(scopes).toEqual([{ kind: 'dir', dir: 'p/s' }]);
    // One event, then quiet: read 30 ms later.
    freshness.onWatchEvent(attached, 'p', undefined);
    await advance(clock, 100, 1);
    expect(flushes.map((t) => t - start)).toEqual([200, 400, 510, 630]);
    expect(scans.at(-1)).toEqual([{ kind: 'dir', dir: 'p' }]);
  });

  it('ignores events of a dropped root, and reads nothing while the first index is built', async () => {
    const { clock, state, attached, freshness, flushes } = setUp({ debounceMs: 30 });
    state.indexing = false;
    freshness.onWatchEvent({ ...attached, retired: true }, 'p', undefined);
    await advance(clock, 1000, 10);
    expect(flushes).toEqual([]);
    state.indexing = true;
    freshness.markDirty({ kind: 'root' });
    freshness.onWatchEvent(attached, 'p', undefined);
    await advance(clock, 10_000, 10);
    expect(flushes).toEqual([]);
    expect(state.pendingTimers()).toBe(0);
  });

  it('reports on the event stream: a look finished, or a replaced root, which it does not scan', async () => {
    const { clock, state, attached, freshness, scans, emitted, replaceRoot } = setUp({ debounceMs: 30 });
    state.indexing = false;
    freshness.onWatchEvent(attached, 'p', undefined);
    await advance(clock, 100, 10);
    expect(scans).toEqual([[{ kind: 'dir', dir: 'p' }]]);
    expect(emitted).toEqual(['settled']);
    replaceRoot();
    freshness.onWatchEvent(attached, 'p', undefined);
    await advance(clock, 100, 10);
    expect(scans.at(-1)).toEqual([]);
    expect(emitted).toEqual(['settled', 'rootReplaced']);
  });

  it("spaces looks at what the watches reported by the last look's cost, when told to", async () => {
    const { clock, state, freshness, flushes, costs } = setUp({ debounceMs: 30, refreshCostFactor: 10 });
    state.indexing = false;
    // A look that takes 20 ms (a large file written continuously): the next waits 10 × 20 ms after it ends.
    costs(20, 0);
    freshness.markDirty({ kind: 'dir', dir: 'p/a' });
    await advance(clock, 30);
    expect(flushes).toHaveLength(1);
    freshness.markDirty({ kind: 'dir', dir: 'p/a' });
    await advance(clock, 199, 1);
    expect(flushes).toHaveLength(1);
    await advance(clock, 1);
    expect(flushes).toHaveLength(2);
  });

  it('spaces full rescans by their minimum interval, their duration and their CPU time', async () => {
    const { clock, state, freshness, flushes, costs } = setUp({ debounceMs: 30, rescanMinIntervalMs: 1000, rescanCostFactor: 200, rescanCpuFactor: 1000 });
    state.indexing = false;
    const rescanAfter = async (expectedGapMs: number) => {
      const before = flushes.length;
      await advance(clock, expectedGapMs - 1, 1);
      expect(flushes).toHaveLength(before);
      await advance(clock, 1);
      expect(flushes).toHaveLength(before + 1);
      expect(freshness.completedRescans).toBe(before + 1);
    };
    // A cheap rescan: the next one comes after the minimum interval (plus the debounce).
    freshness.markDirty({ kind: 'root' });
    await rescanAfter(30);
    await rescanAfter(1000 + 30);
    // One that took 20 ms: 200 × 20 ms apart.
    costs(20, 0);
    await rescanAfter(1000 + 30);
    costs(0, 0);
    await rescanAfter(4000 + 30);
    // One that took 10 ms of CPU: 1000 × 10 ms apart.
    costs(0, 10);
    await rescanAfter(1000 + 30);
    costs(0, 0);
    await rescanAfter(10_000 + 30);
  });

  it('sweeps each unwatched transcript once per period, in batches, and refreshes only a changed one', async () => {
    const keys = ['p/a/session.jsonl', 'p/b/session.jsonl', 'p/c/session.jsonl', 'p/d/session.jsonl'];
    const { clock, attached, freshness, lstatSyncs, refreshes, onDisk } = setUp(
      { sweepIntervalMs: 100, sweepPeriodMs: 1000, sweepCostFactor: 0 },
      keys,
      ['p/d'],
    );
    freshness.scheduleSweep(attached);
    // Ticks every 100 ms; 10 ticks a period, so one key a tick; d is watched.
    await advance(clock, 100);
    expect(lstatSyncs).toEqual(['p/a/session.jsonl']);
    await advance(clock, 200, 100);
    expect(lstatSyncs).toEqual(['p/a/session.jsonl', 'p/b/session.jsonl', 'p/c/session.jsonl']);
    await advance(clock, 700, 100);
    expect(lstatSyncs).toHaveLength(3);
    // The next pass, one period after the first began; b changed meanwhile.
    onDisk.set('/root/p/b/session.jsonl', { ...IDENTITY, size: 20 });
    await advance(clock, 300, 100);
    expect(lstatSyncs).toHaveLength(6);
    expect(refreshes).toEqual(['p/b/session.jsonl']);
    // Three more periods: three checks a period, nothing else to refresh.
    await advance(clock, 3000, 100);
    expect(lstatSyncs).toHaveLength(15);
    expect(new Set(lstatSyncs)).toEqual(new Set(keys.slice(0, 3)));
    expect(refreshes).toEqual(['p/b/session.jsonl']);
  });

  it('spreads a costly sweep pass over its whole, longer period instead of bursting in the first', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `p/s${i}/session.jsonl`);
    // 40 unwatched transcripts, a lstat costing 1 ms: a pass costs 40 ms, so with a cost factor of
    // 100 a pass takes 4 s, though the period is 1 s.
    const { clock, attached, freshness, lstatSyncs, lstatTimes } = setUp({ sweepIntervalMs: 100, sweepPeriodMs: 1000, sweepCostFactor: 100 }, keys, [], 1);
    freshness.scheduleSweep(attached);
    // The first pass knows no cost until its first batch (4 keys, its period's share): then it
    // re-spreads the rest over the 4 s the projected cost asks for, one key a tick.
    await advance(clock, 1100, 100);
    expect(lstatTimes.length).toBeGreaterThanOrEqual(4);
    expect(lstatTimes.length).toBeLessThanOrEqual(4 + 11);
    await advance(clock, 2900, 100);
    expect(lstatTimes).toHaveLength(40);
    expect(Math.max(...lstatTimes) - lstatTimes[0]!).toBeGreaterThan(3000);
    const secondStart = lstatTimes[0]! + 4000;
    await advance(clock, 4000 + 100, 100);
    const second = lstatTimes.slice(40).map((time) => time - secondStart).filter((offset) => offset < 4000);
    // Every key once more, one a tick over the 4 s, never the whole pass in its first second.
    expect(second).toHaveLength(40);
    expect(new Set(lstatSyncs.slice(40, 80))).toEqual(new Set(keys));
    expect(second.filter((offset) => offset < 1000).length).toBeLessThanOrEqual(11);
    expect(Math.max(...second)).toBeGreaterThan(3000);
  });

  it('watches the base and the folders above the leaf folders first, then the leaf folders of the newest sessions (a 3-deep layout)', () => {
    const days = ['sessions/2026/12/01', 'sessions/2026/12/02', 'sessions/2026/12/03', 'sessions/2026/11/30'];
    const keys = days.map((day) => `${day}/rollout.jsonl`);
    const { attached, freshness, watchUpdates } = setUp({ maxWatches: 8 }, keys, [], 0, codexFormat);
    days.forEach((day, i) => Object.assign(attached.index.get(`${day}/rollout.jsonl`)!, { identity: { ...IDENTITY, mtimeMs: [3, 1, 4, 2][i]! } }));
    const above = ['sessions', 'sessions/2026', 'sessions/2026/12', 'sessions/2026/11'];
    // A day without a session yet is about to get one.
    for (const dir of [...above, ...days, 'sessions/2026/11/29']) (attached.directories as ScopedKeys).add(dir);
    freshness.updateWatches(attached);
    // 8 watches: the root's, the 4 folders above the days (before any day), then the days: the empty one, then the newest sessions'.
    expect(watchUpdates.at(-1)!.slice(0, 4).sort()).toEqual([...above].sort());
    expect(watchUpdates.at(-1)!.slice(4)).toEqual(['sessions/2026/11/29', 'sessions/2026/12/03', 'sessions/2026/12/01']);
  });
});

