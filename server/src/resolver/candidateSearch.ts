/**
 * Choosing candidates for a query: dsh's ranking (the target's cwd, then no cwd, then the rest) over a
 * search of ids, titles and cwds, never message bodies.
 */
import type { SessionReferenceCandidate, SessionReferenceTarget } from '@dsh-session-ls/shared';
import { toCandidate } from './candidates';
import type { StoredSessionSummary } from './sessionStore';

// Candidate selection runs on every keystroke over possibly 100,000 sessions. Per listing it builds, once,
// lower-cased haystacks that native `indexOf` searches: a session's segment is its lower-cased id, then (when
// it has a title) its lower-cased label, each followed by SEPARATOR. A hit of a needle without SEPARATOR lies
// inside one field; a hit of one with it counts only when it does. The cwd is not in the segments: sessions
// are grouped by cwd, and a cwd is matched once per group.

const SEPARATOR = '\u0000';

/** Segments searched together. */
interface Haystack {
  /** The segments, concatenated. */
  text: string;
  /** Where each segment starts in `text`. */
  starts: Int32Array;
  /** Length of each segment's lower-cased id (its first field). */
  idLengths: Int32Array;
}

/** The sessions sharing one cwd (or having none), in store order. */
interface CwdGroup {
  /** The lower-cased cwd; undefined for the group of sessions without a cwd. */
  lowerCwd: string | undefined;
  /** Each member's position in the listing. */
  members: Int32Array;
  /**
   * The members' own haystack, made when the group is first searched on its own: only the group of the
   * target's cwd and the one without a cwd ever are, so the other groups never double the memory.
   */
  haystack?: Haystack;
}

/**
 * Everything a query needs about one listing array. Its haystack holds every session, in store order; it
 * is made when a query first needs it: an empty query (a client listing every session) never does.
 */
interface ListingIndex {
  sessions: readonly StoredSessionSummary[];
  haystack?: Haystack;
  /** The group of each session. */
  groupOf: Int32Array;
  groups: CwdGroup[];
  groupByCwd: Map<string, number>;
  /** The group of the sessions without a cwd, or -1. */
  noCwdGroup: number;
  /** The lower-cased cwds of the groups that have one, each followed by SEPARATOR. */
  cwdText: string;
  /** Where each of those cwds starts in `cwdText`, and its group. */
  cwdStarts: Int32Array;
  cwdGroups: Int32Array;
}

// The store hands out the same frozen array (of frozen summaries) until something changes, so an index
// keyed by that array stays right for as long as the array lives. An array that could change in place is
// indexed afresh on each call.
const indexByListing = new WeakMap<readonly StoredSessionSummary[], ListingIndex>();

function listingIndex(sessions: readonly StoredSessionSummary[]): ListingIndex {
  const cached = indexByListing.get(sessions);
  if (cached !== undefined) return cached;
  const { index, immutable } = buildIndex(sessions);
  if (immutable) indexByListing.set(sessions, index);
  return index;
}

// Building costs 0.1–0.3 s of CPU at 100,000 sessions, once per listing; the index holds about 15 MiB there
// (reusing the previous listing's segments by id was tried: the id map alone costs more than it saves).
function buildIndex(sessions: readonly StoredSessionSummary[]): { index: ListingIndex; immutable: boolean } {
  const n = sessions.length;
  let immutable = Object.isFrozen(sessions);
  const groupOf = new Int32Array(n);
  const groupByCwd = new Map<string, number>();
  const groupMembers: number[][] = [];
  const groupCwds: Array<string | undefined> = [];
  let noCwdGroup = -1;
  for (let i = 0; i < n; i++) {
    const summary = sessions[i]!;
    if (immutable && !Object.isFrozen(summary)) immutable = false;
    let group: number;
    if (summary.cwd === undefined) {
      if (noCwdGroup < 0) {
        noCwdGroup = groupMembers.length;
        groupMembers.push([]);
        groupCwds.push(undefined);
      }
      group = noCwdGroup;
    } else {
      let known = groupByCwd.get(summary.cwd);
      if (known === undefined) {
        known = groupMembers.length;
        groupByCwd.set(summary.cwd, known);
        groupMembers.push([]);
        groupCwds.push(summary.cwd);
      }
      group = known;
    }
    groupOf[i] = group;
    groupMembers[group]!.push(i);
  }
  const groups = groupMembers.map(
    (members, group): CwdGroup => ({ lowerCwd: groupCwds[group]?.toLocaleLowerCase(), members: Int32Array.from(members) }),
  );
  const cwdGroups = Int32Array.from(groupByCwd.values());
  const cwdStarts = new Int32Array(cwdGroups.length);
  let cwdOffset = 0;
  cwdGroups.forEach((group, entry) => {
    cwdStarts[entry] = cwdOffset;
    cwdOffset += groups[group]!.lowerCwd!.length + 1;
  });
  const cwdText = Array.from(cwdGroups, (group) => groups[group]!.lowerCwd! + SEPARATOR).join('');
  const index: ListingIndex = { sessions, groupOf, groups, groupByCwd, noCwdGroup, cwdText, cwdStarts, cwdGroups };
  return { index, immutable };
}

/** The haystack of every session of the listing, made on first use. */
function fullHaystack(index: ListingIndex): Haystack {
  if (index.haystack !== undefined) return index.haystack;
  const { sessions } = index;
  const n = sessions.length;
  const parts: string[] = [];
  const starts = new Int32Array(n);
  const idLengths = new Int32Array(n);
  let offset = 0;
  for (let i = 0; i < n; i++) {
    const summary = sessions[i]!;
    // Each field lower-cased on its own, exactly as dsh does (lower-casing can change lengths and look at
    // neighbouring characters, so the joined string would not do).
    const lowerId = summary.id.toLocaleLowerCase();
    idLengths[i] = lowerId.length;
    starts[i] = offset;
    // The fields themselves, joined once at the end: no concatenated segment per session.
    parts.push(lowerId, SEPARATOR);
    offset += lowerId.length + 1;
    if (typeof summary.title === 'string') {
      const lowerTitle = summary.title.toLocaleLowerCase();
      parts.push(lowerTitle, SEPARATOR);
      offset += lowerTitle.length + 1;
    }
  }
  index.haystack = { text: parts.join(''), starts, idLengths };
  return index.haystack;
}

/** The segment holding offset `at`: the last start ≤ `at`. */
function segmentAt(starts: Int32Array, at: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if (starts[middle]! <= at) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** Whether `length` characters at `at` lie inside one field (id, or label) of `segment`. */
function withinField(haystack: Haystack, segment: number, at: number, length: number): boolean {
  const start = haystack.starts[segment]!;
  const idEnd = start + haystack.idLengths[segment]!;
  if (at + length <= idEnd) return true;
  const end = segment + 1 < haystack.starts.length ? haystack.starts[segment + 1]! : haystack.text.length;
  // A segment longer than id + separator holds a label, then its separator.
  return end > idEnd + 1 && at > idEnd && at + length < end;
}

/** The first segment at or after `from` whose id or label holds `needle`; the segment count when none. */
function nextMatch(haystack: Haystack, needle: string, from: number): number {
  const { text, starts } = haystack;
  if (from >= starts.length) return starts.length;
  const spansFields = needle.includes(SEPARATOR);
  let at = text.indexOf(needle, starts[from]!);
  while (at >= 0) {
    const segment = segmentAt(starts, at);
    if (!spansFields || withinField(haystack, segment, at, needle.length)) return segment;
    at = text.indexOf(needle, at + 1);
  }
  return starts.length;
}

/** Collects one rank's matches in store order, up to its room; the target session is never taken. */
class Bucket {
  readonly positions: number[] = [];
  constructor(
    private readonly sessions: readonly StoredSessionSummary[],
    private readonly targetId: string | undefined,
    private readonly room: number,
  ) {}

  get full(): boolean {
    return this.positions.length >= this.room;
  }

  /** Take the session at `position`; true once the bucket is full. */
  take(position: number): boolean {
    const session = this.sessions[position]!;
    // The target is a dsh session: another agent's session with the same id is not it.
    if (this.targetId === undefined || session.id !== this.targetId || session.agent !== undefined) this.positions.push(position);
    return this.full;
  }
}

/** Fill `bucket` with the matching members of one cwd group, in store order. */
function collectGroup(index: ListingIndex, group: CwdGroup, needle: string, bucket: Bucket): void {
  if (bucket.full) return;
  const { members } = group;
  if (needle === '' || group.lowerCwd?.includes(needle) === true) {
    for (let m = 0; m < members.length; m++) if (bucket.take(members[m]!)) return;
    return;
  }
  group.haystack ??= groupHaystack(index, members);
  const haystack = group.haystack;
  for (let m = nextMatch(haystack, needle, 0); m < members.length; m = nextMatch(haystack, needle, m + 1)) {
    if (bucket.take(members[m]!)) return;
  }
}

/** The segments of these sessions, taken from the listing's haystack. */
function groupHaystack(listing: ListingIndex, members: Int32Array): Haystack {
  const index = fullHaystack(listing);
  const segments = new Array<string>(members.length);
  const starts = new Int32Array(members.length);
  const idLengths = new Int32Array(members.length);
  let at = 0;
  for (let m = 0; m < members.length; m++) {
    const position = members[m]!;
    const end = position + 1 < index.starts.length ? index.starts[position + 1]! : index.text.length;
    segments[m] = index.text.slice(index.starts[position]!, end);
    starts[m] = at;
    idLengths[m] = index.idLengths[position]!;
    at += segments[m]!.length;
  }
  return { text: segments.join(''), starts, idLengths };
}

/** The groups (other than `excludedA` and `excludedB`) whose cwd holds the non-empty `needle`, ascending. */
function groupsWithCwdMatch(index: ListingIndex, needle: string, excludedA: number, excludedB: number): number[] {
  const found: number[] = [];
  const { cwdText, cwdStarts, cwdGroups, groups } = index;
  const keep = (group: number): void => {
    if (group !== excludedA && group !== excludedB) found.push(group);
  };
  if (needle.includes(SEPARATOR)) {
    // Rare: a hit in the joined cwds could span two of them.
    for (const group of cwdGroups) if (groups[group]!.lowerCwd!.includes(needle)) keep(group);
  } else {
    // One scan over all cwds; a hit lies inside one cwd, and the next search starts at the next cwd.
    for (let at = cwdText.indexOf(needle); at >= 0; ) {
      const entry = segmentAt(cwdStarts, at);
      keep(cwdGroups[entry]!);
      if (entry + 1 >= cwdStarts.length) break;
      at = cwdText.indexOf(needle, cwdStarts[entry + 1]!);
    }
  }
  return found.sort((a, b) => a - b);
}

/** Fill `bucket` with the matching sessions of every group but `excludedA` and `excludedB`, in store order. */
function collectOthers(index: ListingIndex, needle: string, excludedA: number, excludedB: number, bucket: Bucket): void {
  if (bucket.full) return;
  const { groups, groupOf } = index;
  const n = groupOf.length;
  const excluded = (position: number): boolean => groupOf[position] === excludedA || groupOf[position] === excludedB;
  if (needle === '') {
    for (let i = 0; i < n; i++) if (!excluded(i) && bucket.take(i)) return;
    return;
  }
  // Sessions match by id or label (hits in the haystack), or as members of a group whose cwd matches.
  const wholeGroups = groupsWithCwdMatch(index, needle, excludedA, excludedB);
  const haystack = fullHaystack(index);
  let hit = nextMatch(haystack, needle, 0);
  if (wholeGroups.length === 0) {
    for (; hit < n; hit = nextMatch(haystack, needle, hit + 1)) {
      if (!excluded(hit) && bucket.take(hit)) return;
    }
    return;
  }
  let members = 0;
  for (const group of wholeGroups) members += groups[group]!.members.length;
  if (members * 8 >= n) {
    // Matches are dense: walking the store order reaches the limit soon.
    const whole = new Uint8Array(groups.length);
    for (const group of wholeGroups) whole[group] = 1;
    for (let i = 0; i < n; i++) {
      let matches = whole[groupOf[i]!] === 1;
      if (i === hit) {
        matches ||= !excluded(i);
        hit = nextMatch(haystack, needle, i + 1);
      }
      if (matches && bucket.take(i)) return;
    }
    return;
  }
  // Few sessions in matching groups: their positions in store order, merged with the hits.
  const positions = new Int32Array(members);
  let filled = 0;
  for (const group of wholeGroups) {
    positions.set(groups[group]!.members, filled);
    filled += groups[group]!.members.length;
  }
  positions.sort();
  let next = 0;
  for (;;) {
    const member = next < positions.length ? positions[next]! : n;
    const position = Math.min(member, hit);
    if (position >= n) return;
    if (position === member) next++;
    if (position === hit) hit = nextMatch(haystack, needle, hit + 1);
    if ((position === member || !excluded(position)) && bucket.take(position)) return;
  }
}

const positionsById = new WeakMap<readonly StoredSessionSummary[], Map<string, number>>();

/**
 * The first session of the listing with this id. A target session's cwd is looked up on every keystroke,
 * and at 100,000 sessions a scan costs milliseconds, so a listing that cannot change (frozen, as the store
 * hands it out) gets a map from id to position, made once.
 */
export function findListedSession(sessions: readonly StoredSessionSummary[], id: string): StoredSessionSummary | undefined {
  let positions = positionsById.get(sessions);
  if (positions === undefined) {
    if (!Object.isFrozen(sessions)) return sessions.find((summary) => summary.id === id);
    positions = new Map<string, number>();
    let immutable = true;
    // Backwards, so the first of duplicate ids wins.
    for (let i = sessions.length - 1; i >= 0; i--) {
      const summary = sessions[i]!;
      if (!Object.isFrozen(summary)) immutable = false;
      positions.set(summary.id, i);
    }
    if (immutable) positionsById.set(sessions, positions);
  }
  const position = positions.get(id);
  return position === undefined ? undefined : sessions[position];
}

/**
 * Select candidates from the store's listing (session-reference.md §6 steps 2–6): drop the target, keep
 * query matches (id, cwd or label contains the query, `toLocaleLowerCase()` on both sides, no trimming;
 * message bodies are never searched), rank same cwd, then no cwd, then the rest (stable, store order),
 * cut to `limit`. As in dsh, sessions without a cwd still come before the others when the target cwd is
 * unknown (nothing is "same" then); dsh compatibility wins over a prettier order. Each rank is searched
 * only until the limit is reached.
 */
export function selectCandidates(
  sessions: readonly StoredSessionSummary[],
  target: SessionReferenceTarget | undefined,
  query: string,
  limit: number,
): SessionReferenceCandidate[];
/** The same selection, each row made by `row` (e.g. {@link toMentionCandidate}). */
export function selectCandidates<Row>(
  sessions: readonly StoredSessionSummary[],
  target: SessionReferenceTarget | undefined,
  query: string,
  limit: number,
  row: (summary: StoredSessionSummary) => Row,
): Row[];
export function selectCandidates(
  sessions: readonly StoredSessionSummary[],
  target: SessionReferenceTarget | undefined,
  query: string,
  limit: number,
  row: (summary: StoredSessionSummary) => unknown = toCandidate,
): unknown[] {
  const index = listingIndex(sessions);
  const needle = query.toLocaleLowerCase();
  const targetId = target?.sessionId;
  const targetCwd = target?.cwd;
  const sameCwdGroup = targetCwd === undefined ? -1 : (index.groupByCwd.get(targetCwd) ?? -1);
  const candidates: unknown[] = [];
  const add = (bucket: Bucket): void => {
    for (const position of bucket.positions) candidates.push(row(sessions[position]!));
  };
  for (const group of [sameCwdGroup, index.noCwdGroup]) {
    if (group < 0) continue;
    const bucket = new Bucket(sessions, targetId, limit - candidates.length);
    collectGroup(index, index.groups[group]!, needle, bucket);
    add(bucket);
  }
  const rest = new Bucket(sessions, targetId, limit - candidates.length);
  collectOthers(index, needle, sameCwdGroup, index.noCwdGroup, rest);
  add(rest);
  return candidates;
}
