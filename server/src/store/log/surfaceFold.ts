/**
 * The incremental surface fold (store doc §6.1): the ordered seqs of the model-visible history,
 * validated exactly as dsh validates each event's `surfaceOp` and `sourceEventSeqs`. The state
 * keeps no event payloads, only what later replacements need to be checked.
 */
import crypto from 'node:crypto';
import { SURFACE_EVENT_TYPES, isObjectLike } from './eventRules';

type JsonRecord = Record<string, unknown>;

/** One kind letter per surface node: `u` user/message, `a` assistant/message, `t` tool/result. */
const KIND_LETTER: Record<string, string> = { 'user/message': 'u', 'assistant/message': 'a', 'tool/result': 't' };

/** A tool/result node: its seq, the fingerprint of what a rewrite must keep, and its message id. */
type ToolNode = [seq: number, rewriteKey: string, messageId: string];

/** Serializable fold state. */
export interface SurfaceState {
  /** Current surface seqs, in surface order. */
  seqs: number[];
  /** One kind letter per entry of `seqs`. */
  kinds: string;
  /** The tool/result nodes currently on the surface. */
  tools: ToolNode[];
}

/** How many current surface nodes there are of each type. */
export interface SurfaceCounts {
  user: number;
  assistant: number;
  tool: number;
}

/** An empty surface. */
export function emptySurface(): SurfaceState {
  return { seqs: [], kinds: '', tools: [] };
}

/** Appends a node (`kind` its letter; a tool/result's node with its tool fields) to the surface. */
export function appendSurfaceNode(state: SurfaceState, seq: number, kind: string, tool?: ToolNode): void {
  state.seqs.push(seq);
  state.kinds += kind;
  if (tool !== undefined) state.tools.push(tool);
}

/** Counts the current surface nodes by type. */
export function countSurface(state: SurfaceState): SurfaceCounts {
  const counts: SurfaceCounts = { user: 0, assistant: 0, tool: 0 };
  for (const letter of state.kinds) {
    if (letter === 'u') counts.user++;
    else if (letter === 'a') counts.assistant++;
    else counts.tool++;
  }
  return counts;
}

/** The message id of a tool/result node still on the surface (what a legacy rewrite inherits). */
export function surfaceToolMessageId(state: SurfaceState, seq: number): string | undefined {
  return state.tools.find(([toolSeq]) => toolSeq === seq)?.[2];
}

/** Key-order-independent JSON text, so equal JSON values (as dsh's deep equality sees them) match. */
function canonicalJson(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as JsonRecord;
  const keys = Object.keys(record).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

/** Stands for data nested too deeply to compare (dsh's recursive comparison fails on it too). */
const UNCOMPARABLE = '';

/** `crypto.hash` (Node 20.12+, 21.7+): one call, no Hash object per tool result. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64') => string }).hash;

/** The SHA-256 of `text` (as UTF-8), in base64. */
export function sha256Base64(text: string): string {
  return oneShotHash !== undefined ? oneShotHash('sha256', text, 'base64') : crypto.createHash('sha256').update(text).digest('base64');
}

/** Fingerprint of a tool/result's data with the tool-result block's content blanked (a rewrite may change only that). */
function rewriteKey(data: JsonRecord): string {
  const message = data.message as JsonRecord;
  const [block] = message.content as JsonRecord[];
  const kept = { ...data, message: { ...message, content: [{ ...block, content: null }] } };
  try {
    return sha256Base64(canonicalJson(kept));
  } catch (error) {
    if (error instanceof RangeError) return UNCOMPARABLE;
    throw error;
  }
}

function isEventSeq(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isReplaceOp(op: JsonRecord): op is { op: 'replace'; start: number; end: number } {
  return (
    Object.keys(op).length === 3 &&
    Object.hasOwn(op, 'op') &&
    Object.hasOwn(op, 'start') &&
    Object.hasOwn(op, 'end') &&
    op.op === 'replace' &&
    isEventSeq(op.start) &&
    isEventSeq(op.end)
  );
}

function provenanceProblem(event: JsonRecord, seq: number, shadowed: readonly number[]): string | undefined {
  const raw = event.sourceEventSeqs;
  // The common append without provenance: nothing to check.
  if (raw === undefined && shadowed.length === 0) return undefined;
  let sources: ReadonlySet<number> = new Set<number>();
  if (raw !== undefined) {
    if (!Array.isArray(raw)) return `sourceEventSeqs on event at seq ${seq} must be an array when present`;
    if (raw.length === 0 && event.type !== 'assistant/message') {
      return 'sourceEventSeqs must not be empty except on assistant/message';
    }
    let later: number | undefined;
    let ascending = true;
    let previous = -1;
    for (const source of raw) {
      if (!isEventSeq(source)) return `${String(event.type)} sourceEventSeqs must contain non-negative safe integers`;
      if (source <= previous) ascending = false;
      previous = source;
      if (later === undefined && source >= seq) later = source;
    }
    // Strictly ascending seqs (as dsh writes them, often hundreds) cannot repeat: a set is built
    // only to find a repeat in another order, or to look the shadowed nodes up.
    if (!ascending || shadowed.length > 0) {
      sources = new Set(raw as number[]);
      if (sources.size !== raw.length) return 'sourceEventSeqs must not contain duplicates';
    }
    if (later !== undefined) return `sourceEventSeqs must reference earlier events: ${later} >= current seq ${seq}`;
  }
  const missing = shadowed.filter((shadowedSeq) => !sources.has(shadowedSeq));
  if (missing.length > 0) {
    return `surface replace: sourceEventSeqs must include every shadowed surface node; missing ${missing.join(', ')}`;
  }
  return undefined;
}

/**
 * Validates one event (already at its contiguous seq) against the surface rules and applies it.
 * Returns why the event is invalid (the state is then unchanged), or undefined; `onShadowed`
 * gets the seqs an applied replace took off the surface (they can never come back).
 */
export function foldSurfaceEvent(
  state: SurfaceState,
  event: JsonRecord,
  seq: number,
  onShadowed?: (seqs: readonly number[]) => void,
): string | undefined {
  const type = String(event.type);
  if (!SURFACE_EVENT_TYPES.has(type)) {
    if (event.surfaceOp !== undefined) return `session event "${type}" is not surface-eligible and cannot carry surfaceOp`;
    if (event.sourceEventSeqs !== undefined) {
      return `session event "${type}" is not surface-eligible and cannot carry sourceEventSeqs`;
    }
    return undefined;
  }
  const op = event.surfaceOp;
  if (op === undefined) return `session event "${type}" is surface-eligible and requires a surfaceOp marker`;
  const kind = KIND_LETTER[type];
  // The message shape was validated before folding, so a tool/result has its message and id.
  const toolNode = (): ToolNode => {
    const data = event.data as JsonRecord;
    return [seq, rewriteKey(data), (data.message as JsonRecord).id as string];
  };
  if (op === 'append') {
    const problem = provenanceProblem(event, seq, []);
    if (problem !== undefined) return problem;
    appendSurfaceNode(state, seq, kind, kind === 't' ? toolNode() : undefined);
    return undefined;
  }
  if (!isObjectLike(op) || Array.isArray(op)) return `session event "${type}" carries an invalid surfaceOp`;
  if (!isReplaceOp(op)) return `session event "${type}" carries an invalid replace surfaceOp`;
  const startIdx = state.seqs.indexOf(op.start);
  if (startIdx === -1) return `surface replace: start seq ${op.start} not found in surface`;
  const endIdx = state.seqs.indexOf(op.end);
  if (endIdx === -1) return `surface replace: end seq ${op.end} not found in surface`;
  if (startIdx > endIdx) {
    return `surface replace: start seq ${op.start} (index ${startIdx}) is after end seq ${op.end} (index ${endIdx})`;
  }
  const shadowed = state.seqs.slice(startIdx, endIdx + 1);
  const problem = provenanceProblem(event, seq, shadowed);
  if (problem !== undefined) return problem;
  let replacement: ToolNode | undefined;
  if (kind === 't') {
    if (shadowed.length !== 1) return 'tool/result surface replacement must rewrite exactly one current node';
    const original = state.tools.find(([toolSeq]) => toolSeq === shadowed[0]);
    if (original === undefined) return 'tool/result surface replacement must target a current tool/result';
    replacement = toolNode();
    if (replacement[1] === UNCOMPARABLE || original[1] === UNCOMPARABLE) {
      return 'tool/result surface replacement is nested too deeply to compare';
    }
    if (replacement[1] !== original[1]) return 'tool/result surface replacement may change only content';
  }
  const removed = new Set(shadowed);
  state.seqs.splice(startIdx, shadowed.length, seq);
  state.kinds = state.kinds.slice(0, startIdx) + kind + state.kinds.slice(endIdx + 1);
  state.tools = state.tools.filter(([toolSeq]) => !removed.has(toolSeq));
  if (replacement !== undefined) state.tools.push(replacement);
  onShadowed?.(shadowed);
  return undefined;
}
