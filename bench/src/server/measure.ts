/** The figures measured over a running server: complete first answer, completion latency, prepare. */
import { readFileSync } from 'node:fs';
import { encodeSessionReferenceUri } from '@dsh-session-ls/shared';
import type { RunningServer } from './serverProcess';
import { QUERY_KINDS, type QueryKind } from './queries';
import { median, percentiles, type Percentiles } from '../stats';

interface WireCandidate {
  sessionId: string;
  label: string;
}

/** How long until the server listed every session with its expected label. */
export interface CompleteAnswer {
  /** From spawn to the answer that matched. */
  ms: number;
  polls: number;
  /** Whether the server ever reported work-done progress. */
  sawProgress: boolean;
}

/** Why the answer is not complete yet, for the error when the deadline passes. */
function mismatch(result: readonly WireCandidate[], expected: ReadonlyMap<string, string>): string | undefined {
  if (result.length !== expected.size) return `${result.length} of ${expected.size} sessions listed`;
  let wrong = 0;
  let example = '';
  for (const candidate of result) {
    const label = expected.get(candidate.sessionId);
    if (label !== candidate.label) {
      if (wrong === 0) example = `${candidate.sessionId}: got ${JSON.stringify(candidate.label)}, want ${JSON.stringify(label)}`;
      wrong += 1;
    }
  }
  return wrong === 0 ? undefined : `${wrong} labels differ (e.g. ${example})`;
}

/**
 * Poll `dshSession.candidates` (empty query, limit above the store size) until it lists every
 * session with dsh's label and no work-done progress is active. While the server reports
 * progress we wait for its end instead of polling, so polls do not slow the index down.
 */
export async function waitForCompleteAnswer(server: RunningServer, expected: ReadonlyMap<string, string>, deadlineMs: number): Promise<CompleteAnswer> {
  let polls = 0;
  let sawProgress = false;
  let last: string;
  for (;;) {
    if (server.activeProgress.size > 0) {
      sawProgress = true;
      if (performance.now() - server.spawnedAt > deadlineMs) throw new Error(`indexing progress still active after ${(deadlineMs / 1000).toFixed(0)} s`);
      await server.nextProgressEnd(5000);
      continue;
    }
    try {
      const result = (await server.connection.sendRequest('workspace/executeCommand', {
        command: 'dshSession.candidates',
        arguments: [{ query: '', limit: expected.size + 1 }],
      })) as WireCandidate[];
      polls += 1;
      const now = performance.now();
      const problem = mismatch(result, expected);
      if (problem === undefined && server.activeProgress.size === 0) return { ms: now - server.spawnedAt, polls, sawProgress };
      last = problem ?? 'indexing still in progress';
    } catch (error) {
      polls += 1;
      last = `error: ${(error as Error).message}`;
    }
    const elapsed = performance.now() - server.spawnedAt;
    if (elapsed > deadlineMs) throw new Error(`no complete answer after ${(elapsed / 1000).toFixed(0)} s: ${last}`);
    // Poll resolution ~3% of the time so far: fine early, and light on a long index.
    await server.nextProgressEnd(Math.min(1000, Math.max(20, elapsed * 0.03)));
  }
}

/** Warm completion latency of one query kind. */
export interface LatencyFigure {
  kind: QueryKind;
  roundTrip: Percentiles;
  /** Server-reported time, when the server reports one (`$/logTrace` … took N ms). */
  server?: Percentiles;
  /** Mean number of items per answer, and the share of answers marked incomplete. */
  meanItems: number;
  incompleteShare: number;
}

const DOCUMENT_URI = 'file:///dsh-bench/prompt.md';
const COMPLETION = 'textDocument/completion';

/**
 * Round-trip latency of `textDocument/completion` at the end of `@<query>` lines of an open
 * document: `warmup` unmeasured requests, then `count` measured ones per kind, sequentially.
 */
export async function measureCompletion(server: RunningServer, queries: Record<QueryKind, string[]>, warmup: number, count: number): Promise<LatencyFigure[]> {
  const lines: { kind: QueryKind; query: string }[] = [];
  for (const kind of QUERY_KINDS) for (const query of queries[kind]) lines.push({ kind, query });
  await server.connection.sendNotification('textDocument/didOpen', {
    textDocument: { uri: DOCUMENT_URI, languageId: 'markdown', version: 1, text: lines.map((l) => `@${l.query}`).join('\n') + '\n' },
  });
  const complete = async (line: number, query: string): Promise<{ ms: number; items: number; incomplete: boolean }> => {
    const started = performance.now();
    const result = (await server.connection.sendRequest(COMPLETION, {
      textDocument: { uri: DOCUMENT_URI },
      position: { line, character: 1 + query.length },
      context: { triggerKind: query === '' ? 2 : 1, triggerCharacter: query === '' ? '@' : undefined },
    })) as { items?: unknown[]; isIncomplete?: boolean } | unknown[] | null;
    const ms = performance.now() - started;
    const items = Array.isArray(result) ? result.length : (result?.items?.length ?? 0);
    const incomplete = !Array.isArray(result) && result !== null && result.isIncomplete === true;
    return { ms, items, incomplete };
  };
  const figures: LatencyFigure[] = [];
  for (const kind of QUERY_KINDS) {
    const rows = lines.map((l, i) => ({ ...l, line: i })).filter((l) => l.kind === kind);
    for (let i = 0; i < warmup; i++) await complete(rows[i % rows.length].line, rows[i % rows.length].query);
    server.takeServerTimes(COMPLETION);
    const roundTrips: number[] = [];
    const serverTimes: number[] = [];
    let items = 0;
    let incomplete = 0;
    let unpaired = 0;
    for (let i = 0; i < count; i++) {
      const row = rows[(warmup + i) % rows.length];
      const answer = await complete(row.line, row.query);
      roundTrips.push(answer.ms);
      // Requests go one at a time and the server's line comes before its answer: exactly one belongs to this request.
      const reported = server.takeServerTimes(COMPLETION);
      if (reported.length === 1) serverTimes.push(reported[0]);
      else unpaired += 1;
      items += answer.items;
      if (answer.incomplete) incomplete += 1;
    }
    figures.push({
      kind,
      roundTrip: percentiles(roundTrips),
      // Only when every request had its own figure (else they could not be told apart).
      server: unpaired === 0 ? percentiles(serverTimes) : undefined,
      meanItems: items / count,
      incompleteShare: incomplete / count,
    });
  }
  await server.connection.sendNotification('textDocument/didClose', { textDocument: { uri: DOCUMENT_URI } });
  return figures;
}

/** An answer given while the first index is still being built (indexing must never block answers). */
export interface EarlyAnswer {
  /** From spawn to the answer. */
  msSinceSpawn: number;
  roundTrip: number;
  items: number;
  incomplete: boolean;
}

/** One `@` completion sent right after initialize, while the server indexes. */
export async function measureEarlyAnswer(server: RunningServer): Promise<EarlyAnswer> {
  const uri = 'file:///dsh-bench/early.md';
  await server.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'markdown', version: 1, text: '@\n' } });
  const started = performance.now();
  const result = (await server.connection.sendRequest('textDocument/completion', {
    textDocument: { uri },
    position: { line: 0, character: 1 },
    context: { triggerKind: 2, triggerCharacter: '@' },
  })) as { items?: unknown[]; isIncomplete?: boolean } | unknown[] | null;
  const now = performance.now();
  await server.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  return {
    msSinceSpawn: now - server.spawnedAt,
    roundTrip: now - started,
    items: Array.isArray(result) ? result.length : (result?.items?.length ?? 0),
    incomplete: !Array.isArray(result) && result !== null && result.isIncomplete === true,
  };
}

/** `dshSession.prepare` of some sources: every run's round trip and the median. */
export interface PrepareFigure {
  runs: number[];
  median: number;
  /** UTF-8 bytes of the prepared context text (a sanity figure: the budget caps it). */
  contextBytes: number;
}

/** Round trips of `dshSession.prepare` with these sessions as references, `runs` times. */
export async function measurePrepare(server: RunningServer, sessionIds: readonly string[], runs: number): Promise<PrepareFigure> {
  const times: number[] = [];
  let contextBytes = 0;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const result = (await server.connection.sendRequest('workspace/executeCommand', {
      command: 'dshSession.prepare',
      arguments: [{ content: [{ type: 'text', text: 'Compare these sessions.' }], references: sessionIds.map((sessionId) => ({ sessionId })) }],
    })) as { additionalContext?: { content: { text: string }[] } };
    times.push(performance.now() - started);
    const text = result.additionalContext?.content[0]?.text;
    if (text === undefined) throw new Error('prepare returned no additionalContext');
    contextBytes = Buffer.byteLength(text);
  }
  return { runs: times, median: median(times), contextBytes };
}

/**
 * `dshSession.preview` of a message mentioning the sessions: the same prepare, then the credential
 * check of its context (detection over what is sent). Its time less prepare's is what the check costs.
 */
export async function measurePreview(server: RunningServer, sessionIds: readonly string[], runs: number): Promise<{ runs: number[]; median: number }> {
  const text = `Compare ${sessionIds.map((id) => encodeSessionReferenceUri(id)).join(' and ')} .`;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const markdown = await server.connection.sendRequest('workspace/executeCommand', { command: 'dshSession.preview', arguments: [{ text }] });
    times.push(performance.now() - started);
    if (typeof markdown !== 'string' || !markdown.includes('## The context message')) throw new Error('preview returned no context');
  }
  return { runs: times, median: median(times) };
}

/** The server's CPU use while nothing happens (after the index settled). */
export interface IdleCpuFigure {
  /** The measured window. */
  windowMs: number;
  /** User + system CPU time of the whole process (workers included) over the window. */
  cpuMs: number;
  /** `cpuMs / windowMs`, in percent of one core. */
  percentOfCore: number;
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** utime + stime of a process in ms, from /proc/<pid>/stat (Linux); undefined elsewhere. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
  } catch {
    return undefined;
  }
}

/**
 * The server's CPU time over `windowMs` of doing nothing, after `settleMs` more of nothing (the
 * cache write and the catch-up rescan that follow an index). No request is sent meanwhile.
 */
export async function measureIdleCpu(server: RunningServer, settleMs: number, windowMs: number): Promise<IdleCpuFigure> {
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const before = processCpuMs(server.pid);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const after = processCpuMs(server.pid);
  const elapsed = performance.now() - started;
  if (before === undefined || after === undefined) throw new Error(`cannot read /proc/${server.pid}/stat`);
  return { windowMs: elapsed, cpuMs: after - before, percentOfCore: (100 * (after - before)) / elapsed };
}

/**
 * Polls `dshSession.candidates` every 100 ms until it lists `total` rows with no progress open (a
 * store whose labels the bench did not generate, such as the other agents' homes); the ms from
 * spawn. `onPoll` sees each poll's row count, whether a progress was open, and the ms so far.
 */
export async function waitForListedCount(
  server: RunningServer,
  total: number,
  deadlineMs: number,
  onPoll?: (rows: number, progress: boolean, elapsed: number) => void,
): Promise<number> {
  for (;;) {
    const rows = (await server.connection.sendRequest('workspace/executeCommand', {
      command: 'dshSession.candidates',
      arguments: [{ query: '', limit: total + 1 }],
    })) as unknown[];
    const elapsed = performance.now() - server.spawnedAt;
    const progress = server.activeProgress.size > 0;
    onPoll?.(rows.length, progress, elapsed);
    if (rows.length === total && !progress) return elapsed;
    if (elapsed > deadlineMs) throw new Error(`listing has ${rows.length} of ${total} sessions after ${(elapsed / 1000).toFixed(0)} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
