/**
 * The store a reliability test file runs its servers against: raw sessions written once, every
 * server the file started killed after each test, and at the end a check that nothing any of it
 * did wrote to the store (the server is read-only on session stores).
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { MeasuredServer } from './serverProcess';
import { TemporaryDirectories, treeHash, writeSession, type SessionSpec } from './stores';

export interface ReadOnlyStore {
  readonly temporary: TemporaryDirectories;
  /** Servers to kill after the current test (push each one started). */
  readonly servers: MeasuredServer[];
  /** The sessions root (set once the file's `beforeAll` ran). */
  root(): string;
}

/** Registers the file's hooks for a store of `sessions` under a temporary directory named `name`. */
export function useReadOnlyStore(name: string, sessions: readonly SessionSpec[]): ReadOnlyStore {
  const temporary = new TemporaryDirectories();
  const servers: MeasuredServer[] = [];
  let root: string | undefined;
  let rootHash = '';
  beforeAll(() => {
    root = path.join(temporary.make(name), 'sessions');
    for (const spec of sessions) writeSession(root, spec, 'raw');
    rootHash = treeHash(root);
  });
  afterEach(() => {
    for (const server of servers.splice(0)) server.kill();
  });
  afterAll(() => {
    if (root !== undefined) expect(treeHash(root)).toBe(rootHash);
    temporary.removeAll();
  });
  return {
    temporary,
    servers,
    root: () => {
      if (root === undefined) throw new Error('the store is written in beforeAll');
      return root;
    },
  };
}
