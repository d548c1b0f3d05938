/**
 * The disk store's one event stream. The parts do not call back into each other: each reports
 * what happened as a typed event, and the store's coordinator (`diskStore.ts`) is the one
 * consumer, deciding which part acts on it. Calls go one way only, down: attachment and
 * freshness ask the scanner and the cache for work and get its result back.
 */
import type { SessionsRootProblem } from '@dsh-session-ls/shared';
import type { DiscoveryScope } from '../layoutScopes';
import type { Attached } from './state';

/** Something one part of the store saw that others may act on. */
export type StoreEvent =
  /**
   * The listing is stale: because `rereadKey` was re-read, or (no key) for another reason;
   * `removed` when transcripts left the index.
   */
  | { readonly type: 'listingChanged'; readonly attached: Attached; readonly removed: boolean; readonly rereadKey?: string }
  /** Indexing progress or the root's state changed; `force` tells status listeners at once. */
  | { readonly type: 'statusChanged'; readonly force: boolean }
  /** The known directories changed: the watches may follow. */
  | { readonly type: 'directoriesChanged'; readonly attached: Attached }
  /** A scope needs another look (a transcript went: discovery says what the path is now). */
  | { readonly type: 'scopeStale'; readonly scope: DiscoveryScope }
  /** A watch of `attached` saw a change in `dir` (to `name`, if known). */
  | { readonly type: 'watched'; readonly attached: Attached; readonly dir: string; readonly name: string | undefined }
  /** The root attached now (undefined: none), or why none is (see StoreStatus.rootProblem). */
  | { readonly type: 'rootChanged'; readonly attached: Attached | undefined; readonly problem: SessionsRootProblem | undefined }
  /** The first index of `attached` is built. */
  | { readonly type: 'indexed'; readonly attached: Attached }
  /** A look at the disk finished (or the root is known to be absent): listeners may hear of its changes now. */
  | { readonly type: 'settled' }
  /** The attached root is no longer the directory that was attached (gone or replaced). */
  | { readonly type: 'rootReplaced'; readonly attached: Attached }
  /** The root was dropped: everything scheduled for it stops. */
  | { readonly type: 'detached' };

/** The stream the parts emit on; events reach the one consumer synchronously, in order. */
export class StoreEvents {
  private consumer: ((event: StoreEvent) => void) | undefined;

  /** Sets the one consumer (the coordinator), before any part emits. */
  consume(consumer: (event: StoreEvent) => void): void {
    this.consumer = consumer;
  }

  emit(event: StoreEvent): void {
    this.consumer?.(event);
  }
}
