// The format registry pairs each agent of shared's table with the adapter of that agent, and each
// adapter reads the sessions folder the table names.
import { FOREIGN_AGENTS, foreignAgentInfo } from '@dsh-session-ls/shared';
import { describe, expect, it } from 'vitest';
import { isDatabaseAdapter } from './database';
import { formatOf } from './registry';

describe('formatOf', () => {
  it('gives every agent of the table its own adapter, reading the sessions folder the table names', () => {
    expect(FOREIGN_AGENTS.length).toBeGreaterThan(1);
    for (const agent of FOREIGN_AGENTS) {
      const format = formatOf(agent);
      expect(format.agent).toBe(agent);
      // A database adapter reads the database file the table names; a file adapter, its folder.
      expect(isDatabaseAdapter(format) ? format.file : format.base).toBe(foreignAgentInfo(agent).sessionsFolder);
      expect(isDatabaseAdapter(format)).toBe((foreignAgentInfo(agent) as { sessionsDatabase?: boolean }).sessionsDatabase === true);
    }
    expect(new Set(FOREIGN_AGENTS.map(formatOf)).size).toBe(FOREIGN_AGENTS.length);
  });
});
