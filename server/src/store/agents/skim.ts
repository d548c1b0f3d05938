/**
 * Listing facts of a foreign session file from its bytes, without parsing every line: a fold over
 * the JSONL lines that parses each line until the facts of the file's head are known (cwd, start
 * time, first prompt; Codex: the first prompt), and after that only the lines that can still change
 * a fact (Claude Code: a title record; Codex: a `session_meta`), found by searching the bytes for
 * the record type's name. Every line the fold parses is read exactly as {@link parseJsonl} reads it
 * (torn, non-JSON and non-object lines skipped), so the facts equal those of a whole parse
 * ({@link claudeSessionInfo}, {@link codexSessionInfo}); both CLIs write record types unescaped.
 *
 * A fold can be continued: its state after the last complete line, with the offset of that line's
 * end, is what an append resumes from (see `foreignRead.ts`).
 */
import { asObject, isoTime, promptLabel } from './records';
import { claudeDirectPrompt } from './claudeCode';
import { codexRolloutName, codexUserPrompt } from './codex';

/** What a fold of one agent's lines keeps. */
export interface LineFold {
  /** Folds the complete lines of `bytes[start, end)` (the last may lack its newline only at the end of the file). */
  fold(bytes: Buffer, start: number, end: number): void;
  /** An independent copy (the committed state, before a torn tail is folded into the copy). */
  clone(): LineFold;
}

const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;

/** One line's object, as parseJsonl reads it; undefined for anything it skips. */
function parseLine(bytes: Buffer, start: number, end: number): Record<string, unknown> | undefined {
  const raw = bytes.toString('utf8', start, end).trim();
  if (raw === '' || raw.charCodeAt(0) !== OPEN_BRACE) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Folds lines: every line while `needles()` is undefined, else only the lines holding one of the
 * needles it names (a line whose record type is not named cannot change a fact). Subclasses say
 * what a line's object changes.
 */
abstract class SkimFold implements LineFold {
  protected abstract needles(): readonly Buffer[] | undefined;
  protected abstract apply(value: Record<string, unknown>): void;
  abstract clone(): LineFold;

  fold(bytes: Buffer, start: number, end: number): void {
    const view = end === bytes.length ? bytes : bytes.subarray(0, end);
    let position = start;
    let needles: readonly Buffer[] | undefined;
    // The next occurrence of each needle at or after `position` (-1: none before `end`).
    let next: number[] = [];
    while (position < end) {
      const wanted = this.needles();
      if (wanted === undefined) {
        let lineEnd = view.indexOf(NEWLINE, position);
        if (lineEnd < 0) lineEnd = end;
        const value = parseLine(view, position, lineEnd);
        if (value !== undefined) this.apply(value);
        position = lineEnd + 1;
        continue;
      }
      if (wanted !== needles) {
        needles = wanted;
        next = wanted.map(() => -2);
      }
      let hit = -1;
      for (let i = 0; i < wanted.length; i++) {
        if (next[i]! !== -1 && next[i]! < position) next[i] = view.indexOf(wanted[i]!, position);
        if (next[i]! >= 0 && (hit < 0 || next[i]! < hit)) hit = next[i]!;
      }
      if (hit < 0) return;
      const lineStart = Math.max(position, view.lastIndexOf(NEWLINE, hit) + 1);
      let lineEnd = view.indexOf(NEWLINE, hit);
      if (lineEnd < 0) lineEnd = end;
      const value = parseLine(view, lineStart, lineEnd);
      if (value !== undefined) this.apply(value);
      position = lineEnd + 1;
    }
  }
}

const CLAUDE_TITLE_NEEDLES = ['custom-title', 'ai-title', 'summary'].map((name) => Buffer.from(name));

/** Claude Code's listing facts, folded: the same as {@link claudeSessionInfo} of the whole file. */
export class ClaudeInfoFold extends SkimFold {
  cwd: string | undefined;
  createdAt: number | undefined;
  customTitle: string | undefined;
  aiTitle: string | undefined;
  firstPrompt: string | undefined;
  /** Whether any record was found (a file without one holds no session). */
  records = false;

  protected needles(): readonly Buffer[] | undefined {
    // Any record may hold the cwd or the start time: every line counts until the head's facts are known.
    return this.cwd === undefined || this.createdAt === undefined || this.firstPrompt === undefined ? undefined : CLAUDE_TITLE_NEEDLES;
  }

  protected apply(value: Record<string, unknown>): void {
    this.records = true;
    if (this.cwd === undefined && typeof value.cwd === 'string' && value.cwd !== '') this.cwd = value.cwd;
    this.createdAt ??= isoTime(value.timestamp);
    if (value.type === 'custom-title' && typeof value.customTitle === 'string' && value.customTitle.trim() !== '') this.customTitle = value.customTitle;
    if (value.type === 'ai-title' && typeof value.aiTitle === 'string' && value.aiTitle.trim() !== '') this.aiTitle = value.aiTitle;
    if (value.type === 'summary' && typeof value.summary === 'string' && value.summary.trim() !== '') this.aiTitle = value.summary;
    if (this.firstPrompt === undefined) {
      const prompt = claudeDirectPrompt(value);
      if (prompt !== undefined) this.firstPrompt = promptLabel(prompt);
    }
  }

  clone(): ClaudeInfoFold {
    return Object.assign(new ClaudeInfoFold(), this);
  }

  get title(): string | undefined {
    return this.customTitle ?? this.aiTitle ?? this.firstPrompt;
  }
}

const CODEX_HEAD_NEEDLES = [Buffer.from('session_meta'), Buffer.from('response_item')];
const CODEX_META_NEEDLES = [Buffer.from('session_meta')];

/** Codex's listing facts, folded: the same as {@link codexSessionInfo} of the whole file. */
export class CodexInfoFold extends SkimFold {
  id: string | undefined;
  cwd: string | undefined;
  createdAt: number | undefined;
  firstPrompt: string | undefined;
  records = false;

  constructor(readonly file: string) {
    super();
  }

  protected needles(): readonly Buffer[] | undefined {
    // Any record makes the file a session (its id then from the file name): every line counts until one is found.
    if (!this.records) return undefined;
    // Only a session_meta or a response_item record holds a fact; once the first prompt is known, only a session_meta.
    return this.firstPrompt === undefined ? CODEX_HEAD_NEEDLES : CODEX_META_NEEDLES;
  }

  protected apply(value: Record<string, unknown>): void {
    this.records = true;
    const payload = asObject(value.payload);
    if (value.type === 'session_meta' && payload !== undefined) {
      if (typeof payload.id === 'string' && payload.id !== '') this.id = payload.id;
      if (typeof payload.cwd === 'string' && payload.cwd !== '') this.cwd ??= payload.cwd;
      this.createdAt ??= isoTime(payload.timestamp) ?? isoTime(value.timestamp);
    }
    if (this.firstPrompt === undefined && value.type === 'response_item') {
      const prompt = codexUserPrompt(payload);
      if (prompt !== undefined) this.firstPrompt = promptLabel(prompt);
    }
  }

  clone(): CodexInfoFold {
    return Object.assign(new CodexInfoFold(this.file), this);
  }

  /** The id: the latest `session_meta`'s, else the file name's. */
  get sessionId(): string | undefined {
    return this.id ?? codexRolloutName(this.file)?.id;
  }
}

/** The offset just past the last newline of `bytes[start, end)`, or `start` when it holds none. */
export function committedEnd(bytes: Buffer, start: number, end: number): number {
  const last = (end === bytes.length ? bytes : bytes.subarray(0, end)).lastIndexOf(NEWLINE, end - 1);
  return last < start ? start : last + 1;
}
