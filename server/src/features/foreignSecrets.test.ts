import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatSessionReferenceMention } from '@dsh-session-ls/shared';
import { DiagnosticSeverity, type Diagnostic, type MarkupContent } from 'vscode-languageserver-types';
import { computeDiagnostics } from './diagnostics';
import { AGENT_NOT_ENABLED_CODE } from './foreignMentions';
import { provideMentionHover } from './hover';
import { credentialCorpus } from '../testing/credentialCorpus';
import { conversationSession } from '../testing/mentionFixtures';
import { openDocument, testWorkspace } from '../testing/testWorkspace';

// A Claude Code store written by the real CLI (test/agent-stores/tools/generate.mjs), copied, and a fake
// credential from the corpus generator put into the turn after its compaction (which prepare sends; the
// prompt is written twice, as its queue entry and as the message, and both are sent).
const FIXTURE_HOME = fileURLToPath(new URL('../../../test/agent-stores/fixtures/claude-code/', import.meta.url));
const SESSION = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a01';
const SESSION_FILE = path.join('projects', '-tmp-dsh-agent-fixtures-proj-a', `${SESSION}.jsonl`);
const LAST_PROMPT = 'After the compaction, one more turn';
const corpusItem = credentialCorpus(11, 60).find((entry) => entry.kind === 'github-token')!;
const GITHUB = corpusItem.text.slice(corpusItem.start, corpusItem.end);
const MENTION = formatSessionReferenceMention({ sessionId: SESSION, label: 'Parser', agent: 'claude-code' });

let home: string;
const openWorkspaces: Array<{ dispose(): void }> = [];

beforeEach(() => {
  home = mkdtempSync(path.join(os.tmpdir(), 'dsh-foreign-secrets-'));
  cpSync(FIXTURE_HOME, home, { recursive: true });
  const file = path.join(home, SESSION_FILE);
  const log = readFileSync(file, 'utf8');
  expect(log).toContain(LAST_PROMPT);
  writeFileSync(file, log.replaceAll(LAST_PROMPT, `${LAST_PROMPT}: export GITHUB_TOKEN=${GITHUB}`));
});

afterEach(() => {
  openWorkspaces.splice(0).forEach((workspace) => workspace.dispose());
  rmSync(home, { recursive: true, force: true });
});

function workspaceWith(text: string, agents: readonly string[]) {
  const document = openDocument('file:///w/m.md', text);
  const section = { agents, claudeCodeHome: home };
  const { workspace } = testWorkspace([conversationSession('a', { cwd: '/w', title: 'Alpha' })], { folders: ['/w'], documents: [document], section });
  openWorkspaces.push(workspace);
  return { document, services: workspace.view({ partial: true }) };
}

const secretWarnings = (diagnostics: Diagnostic[]) => diagnostics.filter((d) => d.code === 'REFERENCED_SECRETS');

describe('credentials in a mentioned session of another agent', () => {
  it('warns on a claude-session: mention of an enabled agent, with kinds and counts; the hover lists them; not once redacted or while the agent is off', async () => {
    const text = `See ${MENTION} for the deploy.`;
    const { document, services } = workspaceWith(text, ['dsh', 'claude-code']);
    const diagnostics = await computeDiagnostics(document, services);
    const warnings = secretWarnings(diagnostics);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      severity: DiagnosticSeverity.Warning,
      source: 'dsh-session',
      data: { kind: 'referenced-secrets', sessionId: SESSION },
      range: { start: document.positionAt(text.indexOf(MENTION)), end: document.positionAt(text.indexOf(MENTION) + MENTION.length) },
    });
    expect(warnings[0]!.message).toContain('2 credentials (2 github-token)');
    expect(JSON.stringify(diagnostics)).not.toContain(GITHUB);

    const hover = await provideMentionHover(document, document.positionAt(text.indexOf(MENTION) + 3), services);
    const value = (hover?.contents as MarkupContent).value;
    expect(value).toContain('**credentials sent to the model**: 2 (github-token × 2)');
    expect(value).not.toContain(GITHUB);

    // As for a dsh mention: nothing once redactSecrets is on.
    const redacting = { ...services, settings: () => ({ ...services.settings(), redactSecrets: true }) };
    expect(secretWarnings(await computeDiagnostics(document, redacting))).toEqual([]);

    // With the agent off, prepare leaves the mention as text: no warning, only the Hint naming the agents setting.
    const off = workspaceWith(text, ['dsh']);
    const offDiagnostics = await computeDiagnostics(off.document, off.services);
    expect(offDiagnostics.map((d) => d.code)).toEqual([AGENT_NOT_ENABLED_CODE]);
  });
});
