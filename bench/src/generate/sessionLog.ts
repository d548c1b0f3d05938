/**
 * One synthetic session log shaped like what dsh writes (store doc §2–§4): turns with steps,
 * packed chunk rows split by write batches, tool calls and results, titles (fallback, provider,
 * user rename), compaction checkpoints, and now and then an open (crashed or live) last turn.
 */
import type { Corpus } from './corpus';
import { DshLog, MODEL_SOURCE, type EventExtra, type HeaderFields } from './dshLog';
import type { Random } from './random';

/** What to generate for one session. */
export interface SessionSpec {
  id: string;
  /** Absent: the header has no cwd (`_no-cwd`). */
  cwd?: string;
  createdAt: number;
  /** Approximate uncompressed size of the whole log. */
  targetBytes: number;
  /** Set for subagent children. */
  parentSession?: string;
  /** Leave the last turn open (no `turn/end`), as a live or crashed writer does. */
  openTail: boolean;
  /** Write no title event at all (the session is then labelled by its id). */
  untitled: boolean;
}

/** A generated log: the header line, then the lines of each durable append batch. */
export interface GeneratedLog {
  /** The header line, `\n`-terminated (zstd frame 1). */
  header: string;
  /** Each batch's lines, every one `\n`-terminated (one zstd frame each). */
  batches: string[];
  /** The `data.title` of the last `session/title` event; undefined when there is none. */
  title: string | undefined;
  /** Events after row expansion. */
  events: number;
}

const PROVIDER = MODEL_SOURCE.provider;
const MODEL = MODEL_SOURCE.model;
const TOOLS = ['read', 'bash', 'edit', 'grep', 'write'];
const COMPACT_PREAMBLE =
  'This is an automatically generated checkpoint of the earlier conversation, written when the context grew too large. <compacted-summary>';
/** Surface bytes after which an automatic compaction happens (a context window's worth, roughly). */
const COMPACTION_THRESHOLD = 240_000;

/** dsh's log writer plus what the generator steers by: the surface's size. */
class LogWriter extends DshLog {
  surfaceBytes = 0;

  constructor(header: HeaderFields, start: number) {
    super({ header, clock: { start } });
  }

  override event(type: string, data: unknown, extra: EventExtra = {}): number {
    const seq = super.event(type, data, extra);
    if (extra.surfaceOp === 'append') this.surfaceBytes += this.lastLine.length + 1;
    return seq;
  }
}

/** Split text into stream tokens (a word with its leading whitespace, sometimes cut in two). */
function tokenize(text: string, random: Random): string[] {
  const tokens: string[] = [];
  for (const token of text.match(/\s*\S+|\s+$/g) ?? [text]) {
    if (token.length > 6 && random.chance(0.15)) {
      const cut = random.int(2, token.length - 2);
      const code = token.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) tokens.push(token);
      else tokens.push(token.slice(0, cut), token.slice(cut));
    } else tokens.push(token);
  }
  return tokens.length > 0 ? tokens : [text];
}

/** Generate one session log from its spec. */
export function generateSessionLog(spec: SessionSpec, random: Random, corpus: Corpus): GeneratedLog {
  const header: HeaderFields = { id: spec.id, createdAt: spec.createdAt, cwd: spec.cwd, parentSession: spec.parentSession };
  const w = new LogWriter(header, spec.createdAt + random.int(5, 400));
  let title: string | undefined;
  let compactions = 0;
  let renamed = false;
  const renameAtTurn = random.chance(0.08) ? random.int(2, 6) : -1;
  const providerTitle = random.chance(0.4);
  const uuid = (): string => random.uuid();

  const stream = (kind: 'text' | 'reasoning', turn: number, step: number, index: number, text: string): number[] => {
    const seqs: number[] = [];
    const tokens = tokenize(text, random);
    let at = 0;
    while (at < tokens.length) {
      const take = Math.min(tokens.length - at, random.int(6, 48));
      const part = tokens.slice(at, at + take);
      at += take;
      if (part.length >= 3) {
        const dt = part.slice(1).map(() => random.int(0, 45));
        seqs.push(...w.row(kind === 'text' ? 'text-chunks' : 'reasoning-chunks', { turn, step, index, dt, texts: part }, part.length, dt));
      } else {
        // Runs shorter than 3 stay individual events, as dsh's packer leaves them.
        for (const piece of part) {
          seqs.push(w.event('assistant/chunk', { turn, step, chunk: { type: `${kind}-delta`, index, text: piece } }));
          w.tick(random.int(0, 40));
        }
      }
      if (at < tokens.length) w.flush();
    }
    return seqs;
  };

  const setTitle = (text: string, messageSeqs: number[], source: unknown): void => {
    title = text;
    w.event('session/title', { title: text, messageSeqs, source });
  };

  let turn = 0;
  while (w.chars < spec.targetBytes || turn === 0) {
    turn += 1;
    const remaining = spec.targetBytes - w.chars;
    const last = remaining < 16_000;
    w.event('turn/start', { turn });
    w.event('step/start', { turn, step: 1 });
    const prompt = corpus.proseSlice(random, Math.round(Math.min(6000, random.logNormal(220, 0.9))));
    const userSeq = w.event(
      'user/message',
      { content: [{ type: 'text', text: prompt }], source: { kind: 'user' }, role: 'user', id: uuid() },
      { surfaceOp: 'append' },
    );
    if (turn === 1 && random.chance(0.6)) {
      const snapshot = `Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\n${corpus.proseSlice(random, 300)}`;
      w.event(
        'user/message',
        {
          content: [{ type: 'text', text: snapshot }],
          source: { kind: 'plugin', plugin: '@deepseek-ai/dsh-system-prompt', form: 'snapshot', sections: [{ name: 'sandbox:policy', text: snapshot.slice(90) }] },
          role: 'user',
          id: uuid(),
        },
        { surfaceOp: 'append' },
      );
    }
    if (turn === 1 && !spec.untitled) {
      setTitle(prompt.split(/\s+/).slice(0, 6).join(' ').slice(0, 80), [userSeq], { kind: 'fallback' });
    }
    if (turn === 1) {
      w.event('request/header', { header: { config: { provider: PROVIDER, model: MODEL }, system: '{{system}}', tools: '{{tools}}' }, reason: 'initial' });
    }
    w.event('request/context', { provider: PROVIDER, model: MODEL });
    w.flush();

    const steps = 1 + (last ? 0 : Math.min(4, Math.floor(random.logNormal(1, 0.9))));
    for (let step = 1; step <= steps; step++) {
      const useTool = step < steps;
      if (step > 1) w.event('step/start', { turn, step });
      w.tick(random.int(300, 3000));
      const chunkSeqs: number[] = [];
      const content: unknown[] = [];
      let index = 0;
      if (random.chance(0.3)) {
        const reasoning = corpus.proseSlice(random, Math.round(Math.min(20_000, random.logNormal(400, 0.8))));
        chunkSeqs.push(w.event('assistant/chunk', { turn, step, chunk: { type: 'block-start', index, blockType: 'reasoning' } }));
        chunkSeqs.push(...stream('reasoning', turn, step, index, reasoning));
        const block = { type: 'reasoning', text: reasoning };
        chunkSeqs.push(w.event('assistant/chunk', { turn, step, chunk: { type: 'block-end', index, block } }));
        content.push(block);
        index += 1;
      }
      const answer = corpus.proseSlice(random, Math.round(Math.min(40_000, random.logNormal(useTool ? 200 : 900, 0.9))));
      chunkSeqs.push(w.event('assistant/chunk', { turn, step, chunk: { type: 'block-start', index, blockType: 'text' } }));
      chunkSeqs.push(...stream('text', turn, step, index, answer));
      const textBlock = { type: 'text', text: answer };
      chunkSeqs.push(w.event('assistant/chunk', { turn, step, chunk: { type: 'block-end', index, block: textBlock } }));
      content.push(textBlock);
      index += 1;
      let call: { id: string; name: string; arguments: string } | undefined;
      if (useTool) {
        const name = random.pick(TOOLS);
        const args = JSON.stringify(name === 'bash' ? { command: `npm test -- ${random.int(1, 99)}` } : { path: `src/${corpus.topic(random).split(' ')[0].toLowerCase()}.ts` });
        call = { id: `call_${uuid().slice(0, 8)}`, name, arguments: args };
        chunkSeqs.push(w.event('assistant/chunk', { turn, step, chunk: { type: 'block-start', index, blockType: 'tool-call' } }));
        const pieces = ['', ...(args.match(/.{1,7}/gs) ?? [args])];
        const dt = pieces.slice(1).map(() => random.int(0, 20));
        chunkSeqs.push(...w.row('tool-call-chunks', { turn, step, index, id: call.id, name, dt, args: pieces }, pieces.length, dt));
        const block = { type: 'tool-call', ...call };
        chunkSeqs.push(w.event('assistant/chunk', { turn, step, chunk: { type: 'block-end', index, block } }));
        content.push(block);
      }
      const usage = { inputTokens: random.int(500, 60_000), outputTokens: random.int(20, 4000), cacheReadTokens: random.int(0, 50_000) };
      chunkSeqs.push(w.event('assistant/chunk', { turn, step, chunk: { type: 'usage', usage } }));
      chunkSeqs.push(w.event('assistant/chunk', { turn, step, chunk: { type: 'finish', reason: { kind: call ? 'tool-calls' : 'stop' } } }));
      w.event(
        'assistant/message',
        { turn, step, message: { role: 'assistant', content, source: MODEL_SOURCE, id: uuid() }, usage },
        { sourceEventSeqs: chunkSeqs, surfaceOp: 'append' },
      );
      if (call) {
        const callSeq = w.event('tool/call', { turn, step, callId: call.id, name: call.name, arguments: call.arguments });
        w.flush();
        w.tick(random.int(20, 8000));
        const output = corpus.codeSlice(random, Math.round(Math.min(60_000, random.logNormal(1500, 1.1))));
        w.event(
          'tool/result',
          {
            turn,
            step,
            message: {
              source: { kind: 'tool', callId: call.id },
              content: [{ type: 'tool-result', toolCallId: call.id, content: [{ type: 'text', text: output }], isError: random.chance(0.05) }],
              role: 'user',
              id: uuid(),
            },
          },
          { sourceEventSeqs: [callSeq], surfaceOp: 'append' },
        );
      }
      w.event('step/end', { turn, step });
      w.flush();
    }
    w.event('turn/end', { turn, reason: { kind: 'completed' } });
    w.flush();

    if (turn === 1 && providerTitle && !spec.untitled) {
      w.tick(random.int(200, 2000));
      setTitle(corpus.topic(random), [userSeq], { kind: 'provider', provider: PROVIDER, model: { provider: PROVIDER, model: MODEL } });
      w.flush();
    }
    if (turn === renameAtTurn && !renamed && !spec.untitled) {
      renamed = true;
      w.tick(random.int(1000, 600_000));
      setTitle(`${corpus.topic(random)} (${random.int(1, 9)})`, [], { kind: 'user' });
      w.flush();
    }
    const manual = turn === 3 && random.chance(0.03);
    if ((w.surfaceBytes > COMPACTION_THRESHOLD || manual) && w.surface().length >= 3) {
      compactions += 1;
      compact(w, random, corpus, `c-${compactions}`, uuid);
    }
    w.tick(random.chance(0.1) ? random.int(3_600_000, 5 * 86_400_000) : random.int(5_000, 900_000));
  }
  if (spec.openTail) {
    // The writer stopped mid-step after asking for a tool: the reader adds its in-memory closers.
    turn += 1;
    w.event('turn/start', { turn });
    w.event('step/start', { turn, step: 1 });
    const prompt = corpus.proseSlice(random, 120);
    w.event('user/message', { content: [{ type: 'text', text: prompt }], source: { kind: 'user' }, role: 'user', id: uuid() }, { surfaceOp: 'append' });
    const call = { type: 'tool-call', id: `call_${uuid().slice(0, 8)}`, name: 'bash', arguments: '{"command":"npm run build"}' };
    const start = w.event('assistant/chunk', { turn, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'tool-call' } });
    const end = w.event('assistant/chunk', { turn, step: 1, chunk: { type: 'block-end', index: 0, block: call } });
    w.event(
      'assistant/message',
      { turn, step: 1, message: { role: 'assistant', content: [call], source: MODEL_SOURCE, id: uuid() } },
      { sourceEventSeqs: [start, end], surfaceOp: 'append' },
    );
    w.flush();
  }
  const [[headerLine], ...batches] = w.batches();
  return { header: `${headerLine}\n`, batches: batches.map((lines) => lines.map((line) => `${line}\n`).join('')), title, events: w.seq };
}

/** A manual-style compaction bracket whose checkpoint replaces the oldest ~70% of the surface. */
function compact(w: LogWriter, random: Random, corpus: Corpus, compactionId: string, uuid: () => string): void {
  const startSeq = w.event('compaction/start', { compactionId, turn: null });
  const k = Math.max(1, Math.floor(w.surface().length * 0.7) - 1);
  const shadowedSeqs = w.surface().slice(0, k + 1);
  const range = { start: shadowedSeqs[0], end: shadowedSeqs[shadowedSeqs.length - 1] };
  const summary = corpus.proseSlice(random, random.int(800, 4000));
  w.tick(random.int(2000, 20_000));
  const summarySeq = w.event('compaction/summary', {
    compactionId,
    summary: [{ type: 'text', text: summary }],
    shadowedRange: range,
    shadowedSeqs,
    shadowedTokenCount: random.int(20_000, 90_000),
    provider: PROVIDER,
    model: MODEL,
  });
  w.event(
    'user/message',
    {
      content: [
        { type: 'text', text: COMPACT_PREAMBLE },
        { type: 'text', text: summary },
        { type: 'text', text: '</compacted-summary>' },
      ],
      source: { kind: 'plugin', plugin: 'compact', compactionId },
      role: 'user',
      id: uuid(),
    },
    { sourceEventSeqs: [startSeq, summarySeq, ...shadowedSeqs], surfaceOp: { op: 'replace', ...range } },
  );
  w.event('compaction/end', { compactionId, turn: null });
  w.flush();
  w.surfaceBytes = Math.round(w.surfaceBytes * 0.3) + summary.length;
}
