/**
 * The header line (store doc §2): listing-level validation, the load-time version refusal and the
 * checks dsh's `Session` adds when a log is loaded.
 */
import { isAbsolute } from 'node:path';
import { SessionReadError } from '../../resolver/sessionStore';

/** The only log format version that exists (`SESSION_FORMAT_VERSION`). */
export const SESSION_FORMAT_VERSION = 0;

/** A valid header line, with only the keys dsh defines (unknown extra keys are dropped). */
export interface SessionHeaderRecord {
  type: 'session';
  version: number;
  id: string;
  createdAt: number;
  cwd?: string;
  parentSession?: string;
  seedLength?: number;
  origin?: 'subagent';
  delegationDepth: number;
  agentPreset?: string;
}

const RETIRED_HEADER_KEYS = ['sandboxMode', 'approvalPolicy'];

function isNonNegativeSafeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && !Object.is(value, -0);
}

/** Why a parsed first line is not a valid header as listing sees it (version need only be a number). */
function headerShapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'first line is not a session header';
  const header = value as Record<string, unknown>;
  if (header.type !== 'session') return 'first line is not a session header';
  if (typeof header.version !== 'number') return 'header version is not a number';
  if (typeof header.id !== 'string') return 'header id is not a string';
  if (!isNonNegativeSafeInteger(header.createdAt)) return 'header createdAt is not a non-negative safe integer';
  if (header.cwd !== undefined && typeof header.cwd !== 'string') return 'header cwd is not a string';
  if (header.parentSession !== undefined && typeof header.parentSession !== 'string') {
    return 'header parentSession is not a string';
  }
  if (header.seedLength !== undefined && !isNonNegativeSafeInteger(header.seedLength)) {
    return 'header seedLength is not a non-negative safe integer';
  }
  if (header.origin !== undefined && header.origin !== 'subagent') return 'header origin is not "subagent"';
  if (!isNonNegativeSafeInteger(header.delegationDepth)) {
    return 'header delegationDepth is missing or not a non-negative safe integer';
  }
  if (header.agentPreset !== undefined && typeof header.agentPreset !== 'string') {
    return 'header agentPreset is not a string';
  }
  if (RETIRED_HEADER_KEYS.some((key) => Object.hasOwn(header, key))) {
    return 'session header uses retired policy baseline fields';
  }
  return undefined;
}

function headerRecordOf(value: Record<string, unknown>): SessionHeaderRecord {
  const header: SessionHeaderRecord = {
    type: 'session',
    version: value.version as number,
    id: value.id as string,
    createdAt: value.createdAt as number,
    delegationDepth: value.delegationDepth as number,
  };
  if (value.cwd !== undefined) header.cwd = value.cwd as string;
  if (value.parentSession !== undefined) header.parentSession = value.parentSession as string;
  if (value.seedLength !== undefined) header.seedLength = value.seedLength as number;
  if (value.origin !== undefined) header.origin = 'subagent';
  if (value.agentPreset !== undefined) header.agentPreset = value.agentPreset as string;
  return header;
}

function corrupt(message: string): SessionReadError {
  return new SessionReadError('corrupt', `corrupt session log: ${message}`);
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw corrupt('header line is not valid JSON');
  }
}

/** Validate a header line as LISTING does (version only needs to be a number); throws SessionReadError('corrupt', reason) when not a valid header. */
export function parseSessionHeaderLine(line: string): SessionHeaderRecord {
  const parsed = parseJson(line);
  const problem = headerShapeProblem(parsed);
  if (problem !== undefined) throw corrupt(problem);
  return headerRecordOf(parsed as Record<string, unknown>);
}

/** dsh's refusal of a version it does not read (direction-aware, like dsh's wording). */
function versionRefusal(id: unknown, version: number): SessionReadError {
  const name = JSON.stringify(typeof id === 'string' ? id : String(id));
  const message =
    version > SESSION_FORMAT_VERSION
      ? `session ${name} uses log format v${version}, but this harness reads only v${SESSION_FORMAT_VERSION}: the log was written by a newer harness — upgrade the harness to open it`
      : `session ${name} uses log format v${version}, older than the supported v${SESSION_FORMAT_VERSION}, and this build ships no upgrade path for it`;
  return new SessionReadError('unsupported', message);
}

/** A header line read both ways: what listing accepts, and what loading refuses first. */
export interface ParsedHeaderLine {
  /** The header as listing sees it; undefined when the line is not a valid header. */
  header?: SessionHeaderRecord;
  /** Why loading this log fails at the header (a version refusal wins over shape problems). */
  loadError?: SessionReadError;
}

/** Parses a header line for loading: a numeric version other than 0 is refused before any other check. */
export function parseHeaderLineForLoad(line: string): ParsedHeaderLine {
  let parsed: unknown;
  try {
    parsed = parseJson(line);
  } catch (error) {
    return { loadError: error as SessionReadError };
  }
  const problem = headerShapeProblem(parsed);
  const header = problem === undefined ? headerRecordOf(parsed as Record<string, unknown>) : undefined;
  if (typeof parsed === 'object' && parsed !== null) {
    const { version, id } = parsed as { version?: unknown; id?: unknown };
    if (typeof version === 'number' && version !== SESSION_FORMAT_VERSION) {
      return { header, loadError: versionRefusal(id, version) };
    }
  }
  return problem === undefined ? { header } : { loadError: corrupt(problem) };
}

/** What dsh's `Session` construction rejects in a header that listing accepted (a relative cwd). */
export function headerLoadProblem(header: SessionHeaderRecord): string | undefined {
  if (header.cwd !== undefined && !isAbsolute(header.cwd)) {
    return `session header cwd must be an absolute path, got ${JSON.stringify(header.cwd)}`;
  }
  return undefined;
}
