/**
 * What dsh checks on each stored event at load (store doc §3): the known event types, the message
 * shape of the three surface types and the event envelope.
 */

type JsonRecord = Record<string, unknown>;

/** The 48 event types this dsh format knows (`KNOWN_SESSION_EVENT_TYPES`). */
export const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set([
  'agent-preset/selected',
  'agent/inbox/spliced',
  'approval/asked',
  'approval/decided',
  'approval/policy',
  'assistant/chunk',
  'assistant/message',
  'command/done',
  'command/run',
  'compaction/end',
  'compaction/prune',
  'compaction/start',
  'compaction/summary',
  'feedback/record',
  'goal/change',
  'hook/invoked',
  'hook/result',
  'llm/retry',
  'llm/retry-started',
  'permission/preset',
  'plan/mode',
  'request/context',
  'request/header',
  'sandbox/mode',
  'schedule/change',
  'session/end-seed',
  'session/title',
  'session/title-llm-request',
  'step/end',
  'step/start',
  'subagent/descriptor',
  'team/member',
  'team/message/delivered',
  'team/message/queued',
  'team/task',
  'todo/write',
  'tool-workflow/agent-end',
  'tool-workflow/agent-start',
  'tool-workflow/run-end',
  'tool-workflow/run-start',
  'tool/call',
  'tool/code-dispatch',
  'tool/code-dispatch-start',
  'tool/result',
  'turn/end',
  'turn/start',
  'user/message',
  'web/deepseek-search-llm-request',
]);

/** The three event types that join the model-visible surface. */
export const SURFACE_EVENT_TYPES: ReadonlySet<string> = new Set(['user/message', 'assistant/message', 'tool/result']);

const ENVELOPE_KEYS = new Set(['type', 'seq', 'time', 'data', 'surfaceOp', 'sourceEventSeqs', 'ignorable']);
const ADAPTER_DEFAULT_KEYS = new Set(['reasoningEffort', 'maxTokens']);

/** True for objects (arrays included), as dsh's own record checks use. */
export function isObjectLike(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null;
}

function isPlainRecord(value: unknown): value is JsonRecord {
  return isObjectLike(value) && !Array.isArray(value);
}

function hasProviderModel(value: unknown): boolean {
  if (!isObjectLike(value)) return false;
  return (
    typeof value.provider === 'string' &&
    value.provider.length > 0 &&
    typeof value.model === 'string' &&
    value.model.length > 0
  );
}

/** The message a surface event carries (`user/message` data is the message itself). */
export function messageOf(event: JsonRecord): unknown {
  const data = event.data;
  if (!isObjectLike(data)) return undefined;
  return event.type === 'user/message' ? data : data.message;
}

/** Why a surface event's message is not one dsh can replay (id, role, source, content), or undefined. */
export function messageShapeProblem(event: JsonRecord): string | undefined {
  const type = event.type;
  if (typeof type !== 'string' || !SURFACE_EVENT_TYPES.has(type)) return undefined;
  const subject = `${type} at seq ${String(event.seq)}`;
  const message = messageOf(event);
  if (!isObjectLike(message) || typeof message.id !== 'string' || message.id === '') {
    return `${subject} lacks an identified message`;
  }
  const expectedRole = type === 'assistant/message' ? 'assistant' : 'user';
  if (message.role !== expectedRole) return `${subject} message must have role "${expectedRole}"`;
  const source = message.source;
  if (!isObjectLike(source) || typeof source.kind !== 'string' || source.kind === '') {
    return `${subject} message has invalid source`;
  }
  const content = message.content;
  if (!Array.isArray(content)) return `${subject} message has invalid content`;
  if (type === 'assistant/message') {
    return source.kind === 'model' && hasProviderModel(source) ? undefined : `${subject} message must have model source`;
  }
  if (type !== 'tool/result') return undefined;
  if (source.kind !== 'tool' || typeof source.callId !== 'string' || source.callId === '') {
    return `${subject} message must have tool source`;
  }
  const block: unknown = content[0];
  if (content.length !== 1 || !isObjectLike(block) || block.type !== 'tool-result' || !Array.isArray(block.content)) {
    return `${subject} message must contain one tool-result block`;
  }
  if (block.toolCallId !== source.callId) return `${subject} message has mismatched tool call ids`;
  return undefined;
}

function requestHeaderProblem(event: JsonRecord, subject: string): string | undefined {
  const data = event.data;
  const header = isObjectLike(data) ? data.header : undefined;
  const headerRecord = isPlainRecord(header) ? header : undefined;
  const config = headerRecord?.config;
  if (!hasProviderModel(config)) return `${subject} request/header lacks provider/model`;
  const configRecord = config as JsonRecord;
  const effort = configRecord.reasoningEffort;
  if (effort !== undefined && (typeof effort !== 'string' || effort.length === 0)) {
    return `${subject} request/header has an invalid reasoningEffort`;
  }
  const defaults = headerRecord?.adapterDefaults;
  if (defaults === undefined) return undefined;
  if (
    !isPlainRecord(defaults) ||
    Object.keys(defaults).some((key) => !ADAPTER_DEFAULT_KEYS.has(key)) ||
    Object.values(defaults).some((marker) => marker !== true) ||
    (defaults.reasoningEffort === true && configRecord.reasoningEffort === undefined) ||
    (defaults.maxTokens === true && configRecord.maxTokens === undefined)
  ) {
    return `${subject} request/header has invalid adapterDefaults`;
  }
  return undefined;
}

/** Why an event's envelope (keys, seq, time, data, ignorable) or request header is invalid, or undefined. */
export function envelopeProblem(event: JsonRecord, index: number): string | undefined {
  const subject = `event at seq ${index}`;
  for (const key of Object.keys(event)) {
    if (!ENVELOPE_KEYS.has(key)) return `${subject} has an invalid event envelope (key ${JSON.stringify(key)})`;
  }
  const { type, seq, time } = event;
  if (
    typeof type !== 'string' ||
    typeof seq !== 'number' ||
    !Number.isSafeInteger(seq) ||
    seq < 0 ||
    typeof time !== 'number' ||
    !Number.isSafeInteger(time) ||
    event.data === undefined ||
    (event.ignorable !== undefined && event.ignorable !== true)
  ) {
    return `${subject} has an invalid event envelope`;
  }
  if (type === 'request/header') return requestHeaderProblem(event, subject);
  return messageShapeProblem(event);
}
