/**
 * The format adapters, one per agent: the only place that pairs an agent with the code that reads
 * its files. The agents themselves (names, schemes, settings, homes) are contract data in shared's
 * `agents.ts`; a new agent is one row there, one adapter and one line here. dsh's adapter reads
 * through a store's worker pool, so each dsh store makes its own.
 */
import type { ForeignAgent } from '@dsh-session-ls/shared';
import type { SummarizePool } from '../summarize/pool';
import type { TranscriptFiles } from '../transcriptFiles';
import type { FormatAdapter } from './adapter';
import { dshFormat, type DshFormat } from './dsh';
import { claudeFormat } from './claudeCode';
import { codexFormat } from './codex';
import { qwenCodeFormat } from './qwenCode';
import { geminiFormat } from './gemini';
import type { DatabaseAdapter } from './database';
import { opencodeFormat } from './opencode';

export type { FormatAdapter } from './adapter';

const ADAPTERS: Readonly<Record<ForeignAgent, FormatAdapter | DatabaseAdapter>> = {
  'claude-code': claudeFormat,
  codex: codexFormat,
  'qwen-code': qwenCodeFormat,
  gemini: geminiFormat,
  opencode: opencodeFormat,
};

/** The adapter of `agent`: of its session files, or (`isDatabaseAdapter`) of its one database. */
export function formatOf(agent: ForeignAgent): FormatAdapter | DatabaseAdapter {
  return ADAPTERS[agent];
}

/** dsh's format adapter for one store, reading through its worker pool and files. */
export function dshFormatFor(pool: SummarizePool, files: TranscriptFiles): DshFormat {
  return dshFormat(pool, files);
}
