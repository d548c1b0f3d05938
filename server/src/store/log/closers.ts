/**
 * Crash-repair closers (store doc §6.5): when the last turn has no `turn/end`, dsh's `inspect()`
 * appends, in memory, an error result for each pending tool call, then `step/end` (if a step is
 * open) and `turn/end {reason:{kind:'interrupted'}}`.
 */

type JsonRecord = Record<string, unknown>;

/** A tool call requested by the model and not yet answered: its id, its step, and its `tool/call` seq once seen. */
type PendingCall = [callId: unknown, step: unknown, callSeq: number | null];

/** Serializable turn/step/pending-call tracking state. */
export interface TurnState {
  turnOpen: boolean;
  turn?: unknown;
  stepOpen: boolean;
  step?: unknown;
  pending: PendingCall[];
}

/** No turn open. */
export function emptyTurnState(): TurnState {
  return { turnOpen: false, stepOpen: false, pending: [] };
}

const STARTED_TEXT =
  'The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly.';
const NOT_STARTED_TEXT =
  'The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed.';

function unreadable(type: string, seq: number): string {
  return `cannot read the ${type} payload at seq ${seq} while closing an interrupted turn`;
}

/** An assistant message's tool-call block: the call is pending until its result. */
export function requestToolCall(state: TurnState, callId: unknown, step: unknown): void {
  const existing = state.pending.find(([id]) => id === callId);
  // Re-requesting a pending id keeps its place but forgets its tool/call seq (a Map.set).
  if (existing) {
    existing[1] = step;
    existing[2] = null;
  } else {
    state.pending.push([callId, step, null]);
  }
}

/** A tool/result for `callId`: the call is no longer pending. */
export function answerToolCall(state: TurnState, callId: unknown): void {
  state.pending = state.pending.filter(([id]) => id !== callId);
}

/**
 * Follows one (already upgraded, message-validated) event. Returns a problem where dsh's repair
 * scan would fail on the event (a missing payload it reads unguarded), else undefined.
 */
export function trackTurnEvent(state: TurnState, event: JsonRecord, seq: number): string | undefined {
  const data = event.data as JsonRecord | null | undefined;
  switch (event.type) {
    case 'turn/start':
      if (data === null || data === undefined) return unreadable('turn/start', seq);
      state.turnOpen = true;
      state.turn = data.turn;
      state.stepOpen = false;
      state.step = undefined;
      state.pending = [];
      return undefined;
    case 'turn/end':
      state.turnOpen = false;
      state.turn = undefined;
      state.stepOpen = false;
      state.step = undefined;
      state.pending = [];
      return undefined;
    case 'step/start':
      if (data === null || data === undefined) return unreadable('step/start', seq);
      state.stepOpen = true;
      state.step = data.step;
      return undefined;
    case 'step/end':
      state.pending = [];
      state.stepOpen = false;
      state.step = undefined;
      return undefined;
    case 'assistant/message': {
      const content = (data as JsonRecord & { message: { content: unknown[] } }).message.content;
      for (const block of content) {
        if (block === null || block === undefined) return unreadable('assistant/message', seq);
        if ((block as JsonRecord).type !== 'tool-call') continue;
        requestToolCall(state, (block as JsonRecord).id, (data as JsonRecord).step);
      }
      return undefined;
    }
    case 'tool/call': {
      if (data === null || data === undefined) return unreadable('tool/call', seq);
      const entry = state.pending.find(([id]) => id === data.callId);
      if (entry) entry[2] = seq;
      return undefined;
    }
    case 'tool/result':
      answerToolCall(state, ((data as JsonRecord).message as { source: { callId: unknown } }).source.callId);
      return undefined;
    default:
      return undefined;
  }
}

/** The synthetic events that close an open tail turn, continuing after `last`; empty when no turn is open. */
export function interruptedTurnClosers(state: TurnState, last: { seq: number; time: unknown } | undefined): JsonRecord[] {
  if (!state.turnOpen || last === undefined) return [];
  let seq = last.seq + 1;
  const time = last.time;
  const closers: JsonRecord[] = [];
  for (const [callId, step, callSeq] of state.pending) {
    const started = callSeq !== null;
    const message = {
      id: `interrupted-tool-result-${String(callId)}-${seq}`,
      role: 'user',
      source: { kind: 'tool', callId },
      content: [
        {
          type: 'tool-result',
          toolCallId: callId,
          isError: true,
          content: [{ type: 'text', text: started ? STARTED_TEXT : NOT_STARTED_TEXT }],
        },
      ],
    };
    closers.push({
      type: 'tool/result',
      seq: seq++,
      time,
      data: {
        turn: state.turn,
        step,
        message,
        error: started
          ? { name: 'ToolOutcomeUnknownError', code: 'TOOL_OUTCOME_UNKNOWN' }
          : { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' },
      },
      surfaceOp: 'append',
      ...(started ? { sourceEventSeqs: [callSeq] } : {}),
    });
  }
  if (state.stepOpen) closers.push({ type: 'step/end', seq: seq++, time, data: { turn: state.turn, step: state.step } });
  closers.push({ type: 'turn/end', seq, time, data: { turn: state.turn, reason: { kind: 'interrupted' } } });
  return closers;
}
