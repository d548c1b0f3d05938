/**
 * Everything dsh does to the kept events of a log after scanning it, as one incremental fold:
 * legacy refusals and upgrades, message checks, unknown-type refusal, crash-repair closers,
 * envelope checks and the surface fold, plus the latest title. Its state is plain JSON (no event
 * payloads), so an index can keep it for 100,000 sessions and continue it when a log grows.
 *
 * dsh runs these stages one after the other over the whole log, so an error of an earlier stage
 * wins over an earlier-seq error of a later stage; the fold keeps the first error of each stage
 * and reports by stage order.
 */
import { SessionReadError, type SessionEventRecord } from '../../resolver/sessionStore';
import { answerToolCall, interruptedTurnClosers, emptyTurnState, requestToolCall, trackTurnEvent, type TurnState } from './closers';
import { KNOWN_EVENT_TYPES, SURFACE_EVENT_TYPES, envelopeProblem, messageShapeProblem } from './eventRules';
import { headerLoadProblem, type SessionHeaderRecord } from './header';
import { NO_RESET, TURN_RESET, type SkimRun, type SkimmedLine, type TrackedKind } from './lineSkim';
import type { PackedRow } from './rows';
import { LineArena, type KeptEvent } from './storedLines';
import {
  LEGACY_REFUSALS,
  MalformedLegacyEventError,
  legacyRefusalMessage,
  legacyRefusalOf,
  upgradeLegacyEvent,
  type LegacyRefusal,
} from './legacy';
import {
  appendSurfaceNode,
  countSurface,
  emptySurface,
  foldSurfaceEvent,
  surfaceToolMessageId,
  type SurfaceCounts,
  type SurfaceState,
} from './surfaceFold';

type JsonRecord = Record<string, unknown>;

/** A stage's first failure: the reason, and the message. */
export interface FoldFailure {
  reason: SessionReadError['reason'];
  message: string;
}

/** Serializable fold state. */
export interface LogFoldState {
  /** Kept events folded so far (the next expected seq). */
  eventCount: number;
  /** `time` of the last kept event (closers reuse it). */
  lastTime?: unknown;
  /** `data.title` of the last `session/title` when it is a string; undefined when none or not a string. */
  title?: string;
  /** First seq of each refused legacy vocabulary. */
  refusals: Partial<Record<LegacyRefusal, number>>;
  /** First malformed legacy event or invalid message (dsh's per-event upgrade pass). */
  upgradeFailure?: FoldFailure;
  /** First unknown, non-ignorable event type. */
  unknownTypeFailure?: FoldFailure;
  /** First event dsh's repair scan cannot read. */
  repairFailure?: FoldFailure;
  /** First invalid envelope or surface operation (dsh's `Session` construction). */
  sessionFailure?: FoldFailure;
  turns: TurnState;
  surface: SurfaceState;
}

/** What a finished fold says about the log as dsh's `inspect()` would read it. */
export interface FoldOutcome {
  /** Why the log does not load, by dsh's stage order. */
  error?: SessionReadError;
  /** Kept events plus in-memory closers (0 when the log does not load). */
  eventCount: number;
  capturedThroughSeq: number | null;
  title?: string;
  surfaceCounts: SurfaceCounts;
  /** Current surface seqs, in surface order (closers included). */
  surfaceSeqs: number[];
  /** The closers appended in memory. */
  closers: SessionEventRecord[];
}

/**
 * Which kept events a full load collects: every one ('all'); only those on the current surface
 * ('surface': an event a replace shadows is let go at once, so memory follows the surface, not
 * the log); or every surface-type event, shadowed or not ('surface-types', for a transcript).
 */
export type EventCollection = 'all' | 'surface' | 'surface-types';

/** A fresh fold state. */
export function emptyFoldState(): LogFoldState {
  return { eventCount: 0, refusals: {}, turns: emptyTurnState(), surface: emptySurface() };
}

const corrupt = (message: string): FoldFailure => ({ reason: 'corrupt', message });

/** Removes the events of `seqs` from `sink` in place (a sink is in log order; the seqs are few); returns them. */
function dropShadowed(sink: KeptEvent[], seqs: readonly number[]): KeptEvent[] {
  const shadowed = new Set(seqs);
  const dropped: KeptEvent[] = [];
  let kept = 0;
  for (const event of sink) {
    if (shadowed.has(event.seq)) dropped.push(event);
    else sink[kept++] = event;
  }
  sink.length = kept;
  return dropped;
}

/** The data the closers' tracking reads of a skimmed tracked event: its one value, under its key. */
function trackedData(kind: TrackedKind, value: unknown): JsonRecord {
  if (kind === 'turn/start') return { turn: value };
  if (kind === 'step/start') return { step: value };
  if (kind === 'tool/call') return { callId: value };
  return {};
}

/** Folds kept events (seq already checked by the scanner) for one session header. */
export class LogFold {
  constructor(
    readonly header: SessionHeaderRecord,
    readonly state: LogFoldState = emptyFoldState(),
    /** Receives kept (upgraded) events in log order, for a full load; the index passes none. */
    private readonly sink?: KeptEvent[],
    /** Which events go to the sink. */
    private readonly collect: EventCollection = 'all',
  ) {
    if (sink && collect === 'surface') {
      const lines = new LineArena();
      this.lines = lines;
      this.onShadowed = (seqs) => lines.release(dropShadowed(sink, seqs), sink);
    }
  }

  /** A 'surface' collection's line copies. */
  private readonly lines?: LineArena;
  /** Lets a 'surface' collection go of what a replace shadowed. */
  private readonly onShadowed?: (seqs: readonly number[]) => void;

  /** A full load: kept events go to a sink (so each must be parsed as it is). */
  get keepsEvents(): boolean {
    return this.sink !== undefined;
  }

  /** The next seq the log must continue with. */
  get eventCount(): number {
    return this.state.eventCount;
  }

  /** An independent copy (for reading a torn tail without committing it). */
  fork(sink?: KeptEvent[]): LogFold {
    return new LogFold(this.header, structuredClone(this.state), sink, this.collect);
  }

  /**
   * Folds the next kept event; `event.seq` equals {@link eventCount}. `line`, the bytes it was
   * parsed from (valid during the call), lets a 'surface' collection keep a copy of them instead.
   */
  accept(stored: JsonRecord, line?: Uint8Array): void {
    const state = this.state;
    const seq = state.eventCount;
    state.eventCount++;
    const refusal = legacyRefusalOf(stored);
    if (refusal !== undefined) state.refusals[refusal] ??= seq;
    if (state.upgradeFailure !== undefined) return;

    let event: JsonRecord;
    try {
      event = upgradeLegacyEvent(stored, this.header.id, (start) => surfaceToolMessageId(state.surface, start));
    } catch (error) {
      if (!(error instanceof MalformedLegacyEventError)) throw error;
      state.upgradeFailure = corrupt(error.message);
      return;
    }
    const shapeProblem = messageShapeProblem(event);
    if (shapeProblem !== undefined) {
      state.upgradeFailure = corrupt(`session event at seq ${seq}: ${shapeProblem}`);
      return;
    }
    state.lastTime = event.time;
    if (event.type === 'session/title') {
      const data = event.data as JsonRecord | null | undefined;
      state.title = typeof data?.title === 'string' ? data.title : undefined;
    }
    const sink = this.sink;
    if (sink && (this.collect === 'all' || (this.collect === 'surface-types' && SURFACE_EVENT_TYPES.has(event.type as string)))) {
      sink.push(event as unknown as SessionEventRecord);
    }

    if (state.unknownTypeFailure !== undefined) return;
    if (typeof event.type !== 'string' || (!KNOWN_EVENT_TYPES.has(event.type) && event.ignorable !== true)) {
      state.unknownTypeFailure = {
        reason: 'unsupported',
        message: `session ${JSON.stringify(this.header.id)} contains event type ${JSON.stringify(event.type)} (seq ${seq}) unknown to this harness and not marked ignorable; refusing to interpret the log — it was likely written by a newer harness`,
      };
      return;
    }
    if (state.repairFailure !== undefined) return;
    const repairProblem = trackTurnEvent(state.turns, event, seq);
    if (repairProblem !== undefined) {
      state.repairFailure = corrupt(repairProblem);
      return;
    }
    if (state.sessionFailure !== undefined) return;
    const problem = envelopeProblem(event, seq) ?? foldSurfaceEvent(state.surface, event, seq, this.onShadowed);
    if (problem !== undefined) {
      state.sessionFailure = corrupt(`invalid event at seq ${seq}: ${problem}`);
      return;
    }
    // Surface-type and folded without failure: the event is on the surface (until shadowed).
    if (sink && this.collect === 'surface' && SURFACE_EVENT_TYPES.has(event.type as string)) {
      // An upgraded legacy event differs from its line: it is kept as it is.
      const lines = this.lines as LineArena;
      sink.push(event === stored && line !== undefined ? lines.store(seq, line, sink) : (event as unknown as SessionEventRecord));
    }
  }

  /**
   * Folds a packed row's `assistant/chunk` events (its seq0 equals {@link eventCount}). Such an
   * event passes every stage unchanged (no legacy shape, known type, a valid envelope, no surface
   * role, nothing a turn tracks), so unless a full load keeps the events, only the count and the
   * last time move, and the events are never built.
   */
  acceptPackedRow(row: PackedRow): void {
    if (this.sink && this.collect === 'all') {
      for (const event of row.events()) this.accept(event);
      return;
    }
    const state = this.state;
    state.eventCount += row.count;
    // `accept` stops before recording the time once an upgrade failed.
    if (state.upgradeFailure === undefined) state.lastTime = row.lastTime;
  }

  /** Whether {@link acceptSkimmedRun} may fold runs of skimmed lines (not when a full load keeps every event). */
  get foldsSkimmedRuns(): boolean {
    return !(this.sink && this.collect === 'all');
  }

  /**
   * Folds a run of lines read by the skim, each an event or packed row no stage looks into, or a
   * turn/end or step/end, whose seqs continue from {@link eventCount} up to `eventCount`
   * (exclusive), the last at `lastTime`: as many calls of {@link acceptSkimmed} would (only when
   * {@link foldsSkimmedRuns}). `reset` says what the run's turn/end and step/end lines did to the
   * closers' tracking (see `SkimRun.reset`): neither reads its data, so the last reset of the run
   * leaves the state the whole run would.
   */
  acceptSkimmedRun(eventCount: number, lastTime: number, reset: SkimRun['reset'] = NO_RESET): void {
    const state = this.state;
    state.eventCount = eventCount;
    if (state.upgradeFailure !== undefined) return;
    state.lastTime = lastTime;
    // As `accept` tracks them: not after a type or repair failure (the failures are sticky).
    if (reset === NO_RESET || state.unknownTypeFailure !== undefined || state.repairFailure !== undefined) return;
    trackTurnEvent(state.turns, { type: reset === TURN_RESET ? 'turn/end' : 'step/end' }, eventCount - 1);
  }

  /**
   * Folds a line read by {@link skimLine} (its seq equals {@link eventCount}) as {@link accept}
   * and {@link acceptPackedRow} would: an event or packed row no stage looks into, which only
   * moves the count and the last time; an event the closers' tracking follows, which also moves
   * the tracking; a valid appended message, which also requests its tool calls and joins the
   * surface; or a valid appended tool result the skim folded, which answers its call and joins
   * the surface with the rewrite key the skim wrote. Returns false, folding nothing, for a
   * tool/result the skim left to the parser or when a full load keeps the event (the line must
   * then be parsed).
   */
  acceptSkimmed(line: SkimmedLine): boolean {
    if (!line.row && line.surface === 't') return false;
    if (this.sink && (this.collect === 'all' || (!line.row && line.surface !== undefined))) return false;
    const state = this.state;
    this.acceptSkimmedRun(state.eventCount + (line.row ? line.count : 1), line.row ? line.lastTime : line.time);
    if (state.upgradeFailure !== undefined || line.row) return true;
    if (line.track !== undefined) {
      // As `accept` tracks it: the tracking reads only the one value the skim took from the data.
      if (state.unknownTypeFailure !== undefined || state.repairFailure !== undefined) return true;
      trackTurnEvent(state.turns, { type: line.track, data: trackedData(line.track, line.value) }, line.seq);
      return true;
    }
    if (line.surface === undefined) return true;
    if (state.unknownTypeFailure !== undefined || state.repairFailure !== undefined) return true;
    if (line.surface === 'tool') {
      // A valid appended tool result, as `accept` folds it: its call answered, then its surface node.
      answerToolCall(state.turns, line.callId);
      if (state.sessionFailure !== undefined) return true;
      appendSurfaceNode(state.surface, line.seq, 't', [line.seq, line.key, line.messageId]);
      return true;
    }
    // A valid appended message, as `accept` folds it: its tool calls, then its surface node.
    for (const [callId, step] of line.calls) requestToolCall(state.turns, callId, step);
    if (state.sessionFailure !== undefined) return true;
    appendSurfaceNode(state.surface, line.seq, line.surface);
    return true;
  }

  /** The first failure by dsh's stage order (closers run between type refusal and `Session` construction). */
  private failure(): FoldFailure | undefined {
    const state = this.state;
    for (const refusal of LEGACY_REFUSALS) {
      const seq = state.refusals[refusal];
      if (seq !== undefined) return corrupt(legacyRefusalMessage(this.header.id, refusal, seq));
    }
    if (state.upgradeFailure) return state.upgradeFailure;
    if (state.unknownTypeFailure) return state.unknownTypeFailure;
    if (state.repairFailure) return state.repairFailure;
    const headerProblem = headerLoadProblem(this.header);
    if (headerProblem !== undefined) return corrupt(headerProblem);
    return state.sessionFailure;
  }

  /**
   * The log as `inspect()` reads it: the first failure, or the closers appended (in memory; the
   * committed state is left as it was) with the resulting surface, title and `capturedThroughSeq`.
   */
  finish(): FoldOutcome {
    const failure = this.failure();
    if (failure !== undefined) {
      return {
        error: new SessionReadError(failure.reason, failure.message),
        eventCount: 0,
        capturedThroughSeq: null,
        surfaceCounts: { user: 0, assistant: 0, tool: 0 },
        surfaceSeqs: [],
        closers: [],
      };
    }
    const state = this.state;
    const last = state.eventCount === 0 ? undefined : { seq: state.eventCount - 1, time: state.lastTime };
    const closers = interruptedTurnClosers(state.turns, last);
    const surface: SurfaceState = closers.length === 0 ? state.surface : structuredClone(state.surface);
    for (const closer of closers) {
      // Closers are valid by construction; folding them only appends their tool results.
      foldSurfaceEvent(surface, closer, closer.seq as number);
    }
    const eventCount = state.eventCount + closers.length;
    return {
      eventCount,
      capturedThroughSeq: eventCount === 0 ? null : eventCount - 1,
      title: state.title,
      surfaceCounts: countSurface(surface),
      surfaceSeqs: [...surface.seqs],
      closers: closers as unknown as SessionEventRecord[],
    };
  }
}
