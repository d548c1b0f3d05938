import type { ForeignAgent } from '@dsh-session-ls/shared';
import { compareStoreOrder } from '../resolver/storeOrder';
import { SessionReadError, type AgentSessionLog, type SessionSurface, type StoredSessionSummary } from '../resolver/sessionStore';
import type { SessionStoreService, Subscription } from './service';
import type { ForeignSessionStore } from './engine/foreignStore';

const composed = new WeakMap<SessionStoreService, ReadonlySet<ForeignAgent>>();

/** True when `store` is a composite that reads `agent`'s sessions (dsh's own store reads none). */
export function storeServesAgent(store: SessionStoreService, agent: ForeignAgent): boolean {
  return composed.get(store)?.has(agent) === true;
}

/**
 * The dsh store plus other agents' stores, as one `SessionStoreService`. Root, status and problems
 * are the dsh store's; change and content-change events come from every store; the listing merges the enabled
 * stores in store order, so candidate selection ranks them together with dsh's cwd affinity. With
 * no foreign store the listing is the dsh store's own array, untouched. `dsh` may be absent (only
 * foreign agents enabled): then its sessions are not listed, but its store still gives status.
 */
export function composeAgentStores(
  dsh: SessionStoreService,
  foreign: readonly ForeignSessionStore[],
  options: { dshListed: boolean } = { dshListed: true },
): SessionStoreService {
  const byAgent = new Map<ForeignAgent, ForeignSessionStore>(foreign.map((store) => [store.agent, store]));
  // Each foreign store's first listing starts now, as dsh's first index does when its store opens
  // (a failure is the listing's to report, and the composite leaves that store out).
  for (const store of foreign) void store.listSessions().catch(() => undefined);
  let lastInputs: ReadonlyArray<readonly StoredSessionSummary[]> = [];
  let lastMerged: readonly StoredSessionSummary[] = Object.freeze([]);

  async function listSessions(signal?: AbortSignal): Promise<readonly StoredSessionSummary[]> {
    if (foreign.length === 0 && options.dshListed) return dsh.listSessions(signal);
    const inputs = await Promise.all([
      options.dshListed ? dsh.listSessions(signal) : Promise.resolve(Object.freeze([]) as readonly StoredSessionSummary[]),
      // A foreign store that fails to list is left out, never fatal to dsh's own answers.
      ...foreign.map((store) => store.listSessions(signal).catch(() => Object.freeze([]) as readonly StoredSessionSummary[])),
    ]);
    signal?.throwIfAborted();
    if (inputs.length === lastInputs.length && inputs.every((input, i) => input === lastInputs[i])) return lastMerged;
    const merged = mergeInStoreOrder(inputs);
    lastInputs = inputs;
    lastMerged = Object.isFrozen(merged) ? merged : Object.freeze(merged);
    return lastMerged;
  }

  function storeOf(agent: ForeignAgent, sessionId: string): ForeignSessionStore {
    const store = byAgent.get(agent);
    if (store === undefined) {
      throw new SessionReadError('not-found', `${agent} session ${JSON.stringify(sessionId)} not found: ${agent} is not among the enabled agents`);
    }
    return store;
  }

  async function readAgentLog(sessionId: string, agent: ForeignAgent, signal?: AbortSignal): Promise<AgentSessionLog> {
    return storeOf(agent, sessionId).readLog(sessionId, signal);
  }

  async function readSurface(sessionId: string, signal?: AbortSignal, agent?: ForeignAgent): Promise<SessionSurface> {
    if (agent === undefined) {
      if (!options.dshListed) throw new SessionReadError('not-found', `session ${JSON.stringify(sessionId)} not found`);
      return dsh.readSurface(sessionId, signal);
    }
    return storeOf(agent, sessionId).readSurface(sessionId, signal);
  }

  const service: SessionStoreService = {
    get root() {
      return dsh.root;
    },
    status: () => dsh.status(),
    // Each store coalesces its own changes; a listener hears any of them (a foreign session that
    // appears, is renamed or deleted changes completion and diagnostics as a dsh one does).
    onDidChange: (listener) => subscribeAll([dsh, ...foreign], (store) => store.onDidChange(listener)),
    // dsh's sessions only while they are listed (the store still serves status without them).
    onDidChangeContent: (listener) => subscribeAll([...(options.dshListed ? [dsh] : []), ...foreign], (store) => store.onDidChangeContent(listener)),
    onProblem: (listener) => dsh.onProblem(listener),
    onStatus: (listener) => dsh.onStatus(listener),
    whenIndexed: (signal) => dsh.whenIndexed(signal),
    saveCache: async () => {
      await Promise.all([dsh.saveCache?.(), ...foreign.map((store) => store.saveCache?.())]);
    },
    dispose: () => {
      dsh.dispose();
      for (const store of foreign) store.dispose();
    },
    listSessions,
    readSurface,
    readAgentLog,
  };
  composed.set(service, new Set(byAgent.keys()));
  return service;
}

/** One subscription to the same event of several stores. */
function subscribeAll<S>(stores: readonly S[], subscribe: (store: S) => Subscription): Subscription {
  const subscriptions = stores.map(subscribe);
  return { dispose: () => subscriptions.forEach((subscription) => subscription.dispose()) };
}

/** Merge listings that are each in store order into one (ties keep the earlier listing first). */
export function mergeInStoreOrder(listings: ReadonlyArray<readonly StoredSessionSummary[]>): StoredSessionSummary[] {
  const nonEmpty = listings.filter((listing) => listing.length > 0);
  if (nonEmpty.length === 1) return [...nonEmpty[0]!];
  const positions = nonEmpty.map(() => 0);
  const total = nonEmpty.reduce((sum, listing) => sum + listing.length, 0);
  const merged: StoredSessionSummary[] = [];
  while (merged.length < total) {
    let best = -1;
    for (let i = 0; i < nonEmpty.length; i++) {
      if (positions[i]! >= nonEmpty[i]!.length) continue;
      if (best < 0 || compareStoreOrder(nonEmpty[i]![positions[i]!]!, nonEmpty[best]![positions[best]!]!) < 0) best = i;
    }
    merged.push(nonEmpty[best]![positions[best]!++]!);
  }
  return merged;
}
