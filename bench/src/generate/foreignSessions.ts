/**
 * Synthetic Claude Code, Codex, Qwen Code, Gemini CLI and (on a Node with node:sqlite) opencode
 * homes for the mixed-store bench, made from the real fixture files (test/agent-stores/fixtures/,
 * written by the real CLIs): each session is a fixture transcript with a fresh id and cwd, and a
 * title of its own (Claude Code: a `custom-title` record; Codex: a `thread_name` line in
 * `session_index.jsonl`; Qwen Code: a `custom_title` record chained to the last one; Gemini CLI: a
 * `$set` summary line, its cwd in `projects.json` and the project folder's `.project_root`;
 * opencode: its session row, see opencodeSessions.ts). Reused when already generated.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../server/serverProcess';
import { Random } from './random';
import { canMakeOpencodeHome, writeOpencodeHome, type OpencodeSession } from './opencodeSessions';

const GENERATOR_VERSION = 4;
const FIXTURES = path.join(REPO_ROOT, 'test', 'agent-stores', 'fixtures');
// The untitled sessions of each fixture home (no rename of their own to replace).
const CLAUDE_TEMPLATE = path.join(FIXTURES, 'claude-code', 'projects', '-tmp-dsh-agent-fixtures-proj---', '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a02.jsonl');
const CLAUDE_ID = '7b0e4a52-3c1d-4f7e-9a61-0c5e2f1d8a02';
const CODEX_TEMPLATE = path.join(FIXTURES, 'codex', 'sessions', '2026', '12', '03', 'rollout-2026-12-03T10-35-33-01a23b79-474a-78b1-9540-13f1768e6c53.jsonl');
const CODEX_ID = '01a23b79-474a-78b1-9540-13f1768e6c53';
const TEMPLATE_CWD = '/tmp/dsh-agent-fixtures/proj-日本';
const QWEN_TEMPLATE = path.join(FIXTURES, 'qwen-code', 'projects', '-tmp-dsh-agent-fixtures-proj----q', 'chats', '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e01.jsonl');
const QWEN_ID = '9e1f0c2a-5b3d-4c6e-8f70-1a2b3c4d5e01';
const QWEN_TEMPLATE_CWD = '/tmp/dsh-agent-fixtures/proj 日本 q';
const GEMINI_TEMPLATE = path.join(FIXTURES, 'gemini', 'tmp', 'proj-a', 'chats', 'session-2026-12-06T10-35-b2000002.jsonl');
const GEMINI_ID = 'b2000002-7a1e-4c5d-9b2a-3f4e5d6c7b02';
/** The agents a generated home is made for from session files (opencode's database comes on top). */
const FILE_AGENTS = 4;
const WORDS = ['parser', 'lexer', 'cache', 'index', 'fixture', 'weather', 'deploy', 'refactor', 'review', 'migrate', 'tests', 'bench', 'docs', 'router', 'schema', 'auth'];

/** The generated homes. */
export interface ForeignHomes {
  generatorVersion: number;
  seed: number;
  /** Sessions per agent. */
  perAgent: number;
  claudeHome: string;
  codexHome: string;
  qwenHome: string;
  geminiHome: string;
  /** opencode's home, when this Node could make (and the server can read) one. */
  opencodeHome?: string;
  /** Expected label of each session (its generated title), keyed by id. */
  labels: [string, string][];
  cwds: string[];
}

/** Gemini CLI's project folder name of a cwd (its base name as a slug; the bench's base names are distinct). */
function geminiProject(cwd: string): string {
  return path.basename(cwd).toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

/** Claude Code's lossy project folder name of a cwd. */
function projectFolder(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, '-');
}

/** Qwen Code's chat records of the template under a new id and cwd, renamed `title` by a record chained to its last one. */
function qwenSession(template: string, id: string, cwd: string, title: string): string {
  const text = template.replaceAll(QWEN_ID, id).replaceAll(QWEN_TEMPLATE_CWD, cwd);
  const last = JSON.parse(text.trimEnd().split('\n').at(-1)!) as { uuid: string; cwd: string };
  const rename = { uuid: `${last.uuid.slice(0, -4)}7171`, parentUuid: last.uuid, sessionId: id, cwd, type: 'system', subtype: 'custom_title', systemPayload: { customTitle: title, titleSource: 'manual' } };
  return text + JSON.stringify(rename) + '\n';
}

/** The server's command-line flags that read `homes` beside dsh's store. */
export function foreignAgentArgs(homes: ForeignHomes): string[] {
  const opencode = homes.opencodeHome === undefined ? [] : ['--opencode-home', homes.opencodeHome];
  return [
    '--agents',
    `dsh,claude-code,codex,qwen-code,gemini${opencode.length === 0 ? '' : ',opencode'}`,
    '--claude-code-home',
    homes.claudeHome,
    '--codex-home',
    homes.codexHome,
    '--qwen-code-home',
    homes.qwenHome,
    '--gemini-home',
    homes.geminiHome,
    ...opencode,
  ];
}

/**
 * `count` sessions in all, split evenly between Claude Code, Codex, Qwen Code, Gemini CLI and (with
 * node:sqlite) opencode, under `dir` (reused when generated with the same knobs).
 */
export function ensureForeignHomes(dir: string, count: number, seed: number, log: (message: string) => void): ForeignHomes {
  const manifestFile = path.join(dir, 'manifest.json');
  const withOpencode = canMakeOpencodeHome();
  const agents = FILE_AGENTS + (withOpencode ? 1 : 0);
  const perAgent = Math.ceil(count / agents);
  if (existsSync(manifestFile)) {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as ForeignHomes;
    if (manifest.generatorVersion === GENERATOR_VERSION && manifest.perAgent === perAgent && manifest.seed === seed && (manifest.opencodeHome !== undefined) === withOpencode) return manifest;
  }
  rmSync(dir, { recursive: true, force: true });
  const random = new Random(seed ^ 0x17f0);
  const claudeHome = path.join(dir, 'claude-home');
  const codexHome = path.join(dir, 'codex-home');
  const qwenHome = path.join(dir, 'qwen-home');
  const geminiHome = path.join(dir, 'gemini-home');
  const cwds = Array.from({ length: 40 }, (_, i) => `/home/bench/foreign-${i}`);
  const claudeText = readFileSync(CLAUDE_TEMPLATE, 'utf8');
  const codexText = readFileSync(CODEX_TEMPLATE, 'utf8');
  const qwenText = readFileSync(QWEN_TEMPLATE, 'utf8');
  const geminiText = readFileSync(GEMINI_TEMPLATE, 'utf8');
  const labels: [string, string][] = [];
  const title = (): string => Array.from({ length: random.int(2, 5) }, () => random.pick(WORDS)).join(' ');
  const index: string[] = [];
  const opencodeSessions: OpencodeSession[] = [];
  for (let i = 0; i < perAgent; i++) {
    const cwd = random.pick(cwds);
    // Claude Code: the fixture transcript under a new id and cwd, with a custom title at its end.
    const claudeId = random.uuid();
    const claudeTitle = `${title()} ${i}`;
    const projects = path.join(claudeHome, 'projects', projectFolder(cwd));
    mkdirSync(projects, { recursive: true });
    writeFileSync(
      path.join(projects, `${claudeId}.jsonl`),
      claudeText.replaceAll(CLAUDE_ID, claudeId).replaceAll(TEMPLATE_CWD, cwd) + JSON.stringify({ type: 'custom-title', customTitle: claudeTitle, sessionId: claudeId }) + '\n',
    );
    labels.push([claudeId, claudeTitle]);
    // Codex: the fixture rollout under a new id and cwd, in a day folder of its own, named in the index.
    const codexId = random.uuid();
    const codexTitle = `${title()} ${i}`;
    const day = new Date(Date.UTC(2026, 0, 1) + random.int(0, 364) * 86_400_000);
    const [y, m, d] = [day.getUTCFullYear(), String(day.getUTCMonth() + 1).padStart(2, '0'), String(day.getUTCDate()).padStart(2, '0')];
    const dayDir = path.join(codexHome, 'sessions', String(y), m, d);
    mkdirSync(dayDir, { recursive: true });
    const stamp = `${y}-${m}-${d}T${String(random.int(0, 23)).padStart(2, '0')}-${String(random.int(0, 59)).padStart(2, '0')}-00`;
    writeFileSync(path.join(dayDir, `rollout-${stamp}-${codexId}.jsonl`), codexText.replaceAll(CODEX_ID, codexId).replaceAll(TEMPLATE_CWD, cwd));
    index.push(JSON.stringify({ id: codexId, thread_name: codexTitle, updated_at: `${y}-${m}-${d}T12:00:00Z` }));
    labels.push([codexId, codexTitle]);
    // Qwen Code: the fixture chat under a new id and cwd, in its project's chats folder, renamed.
    const qwenId = random.uuid();
    const qwenTitle = `${title()} ${i}`;
    const chats = path.join(qwenHome, 'projects', projectFolder(cwd), 'chats');
    mkdirSync(chats, { recursive: true });
    writeFileSync(path.join(chats, `${qwenId}.jsonl`), qwenSession(qwenText, qwenId, cwd, qwenTitle));
    labels.push([qwenId, qwenTitle]);
    // Gemini CLI: the fixture session under a new id, in the project folder of its cwd, titled by a summary.
    const geminiId = random.uuid();
    const geminiTitle = `${title()} ${i}`;
    const geminiChats = path.join(geminiHome, 'tmp', geminiProject(cwd), 'chats');
    mkdirSync(geminiChats, { recursive: true });
    writeFileSync(
      path.join(geminiChats, `session-2026-01-01T00-00-${geminiId.slice(0, 8)}.jsonl`),
      geminiText.replaceAll(GEMINI_ID, geminiId) + JSON.stringify({ $set: { summary: geminiTitle } }) + '\n',
    );
    labels.push([geminiId, geminiTitle]);
    if (withOpencode) {
      const opencodeSession = { id: `ses_bench_${String(i).padStart(7, '0')}`, title: `${title()} ${i}`, cwd: random.pick(cwds) };
      opencodeSessions.push(opencodeSession);
      labels.push([opencodeSession.id, opencodeSession.title]);
    }
    if ((i + 1) % 1000 === 0) log(`foreign sessions: ${agents * (i + 1)} of ${agents * perAgent}`);
  }
  // Gemini CLI's project registry and each project folder's marker name the cwds.
  mkdirSync(geminiHome, { recursive: true });
  writeFileSync(path.join(geminiHome, 'projects.json'), JSON.stringify({ projects: Object.fromEntries(cwds.map((cwd) => [cwd, geminiProject(cwd)])) }, null, 2));
  for (const cwd of cwds) if (existsSync(path.join(geminiHome, 'tmp', geminiProject(cwd)))) writeFileSync(path.join(geminiHome, 'tmp', geminiProject(cwd), '.project_root'), cwd);
  mkdirSync(codexHome, { recursive: true });
  appendFileSync(path.join(codexHome, 'session_index.jsonl'), index.join('\n') + '\n');
  const opencodeHome = withOpencode ? path.join(dir, 'opencode-home') : undefined;
  if (opencodeHome !== undefined) writeOpencodeHome(opencodeHome, opencodeSessions);
  const manifest: ForeignHomes = { generatorVersion: GENERATOR_VERSION, seed, perAgent, claudeHome, codexHome, qwenHome, geminiHome, ...(opencodeHome === undefined ? {} : { opencodeHome }), labels, cwds };
  writeFileSync(manifestFile + '.tmp', JSON.stringify(manifest));
  renameSync(manifestFile + '.tmp', manifestFile);
  return manifest;
}
