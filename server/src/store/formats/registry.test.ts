// The format registry pairs each agent of shared's table with the adapter of that agent, and each
// adapter reads the sessions folder the table names.
import { FOREIGN_AGENTS, foreignAgentInfo } from '@dsh-session-ls/shared';
import { describe, expect, it } from 'vitest';
import { formatOf } from './registry';

describe('formatOf', () => {
  it('gives every agent of the table its own adapter, reading the sessions folder the table names', () => {
    expect(FOREIGN_AGENTS.length).toBeGreaterThan(1);
    for (const agent of FOREIGN_AGENTS) {
      expect(formatOf(agent).agent).toBe(agent);
      expect(formatOf(agent).base).toBe(foreignAgentInfo(agent).sessionsFolder);
    }
    expect(new Set(FOREIGN_AGENTS.map(formatOf)).size).toBe(FOREIGN_AGENTS.length);
  });
});
