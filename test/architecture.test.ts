// The server's imports form one acyclic chain of layers, as CONTRIBUTING.md's code map draws it: a file
// may import its own layer or a lower one, never a higher one, and no two files import each other
// through any path. Read from the source, so a new import that breaks the chain fails `npm test`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/conformance';

const SERVER_SRC = path.join(REPO_ROOT, 'server', 'src');

/** The layers, lowest first (CONTRIBUTING.md, Code map). `shared/` sits below them all. */
const LAYERS = ['base', 'resolver', 'store', 'features', 'settings', 'wiring', 'entry'] as const;
type Layer = (typeof LAYERS)[number] | 'shared';

/** Which layer a server source file (path relative to server/src, `/`-separated) belongs to. */
function layerOf(relative: string): Layer {
  const [first] = relative.split('/');
  if (relative === 'version.ts') return 'base';
  if (first === 'resolver') return 'resolver';
  if (first === 'store') return 'store';
  if (first === 'features') return 'features';
  if (first === 'settings') return 'settings';
  // The protocol wiring and its siblings that also sit on the settings: the CLI, the demo, the headless client.
  if (first === 'wiring' || first === 'cli' || first === 'demo' || first === 'client') return 'wiring';
  // server.ts, serverProcess.ts, cliProcess.ts, processStore.ts, main.ts, index.ts: processes and their assembly.
  if (!relative.includes('/')) return 'entry';
  throw new Error(`no layer for server/src/${relative}: add it to layerOf and CONTRIBUTING.md`);
}

const rank = (layer: Layer): number => (layer === 'shared' ? -1 : LAYERS.indexOf(layer));

/** Non-test source files of server/src (test support in testing/ excluded), relative and `/`-separated. */
function sourceFiles(dir = SERVER_SRC): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) {
      if (full !== path.join(SERVER_SRC, 'testing')) found.push(...sourceFiles(full));
    } else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) {
      found.push(path.relative(SERVER_SRC, full).split(path.sep).join('/'));
    }
  }
  return found;
}

/** Module specifiers a file imports, re-exports or requires (type-only imports included: they couple too). */
function importedSpecifiers(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(/^\s*(?:import|export)\s[^;]*?\bfrom\s+'([^']+)'|\bimport\s+'([^']+)'|\brequire\('([^']+)'\)|\bimport\('([^']+)'\)/gm)) {
    specifiers.push((match[1] ?? match[2] ?? match[3] ?? match[4])!);
  }
  return specifiers;
}

/** The server source file a relative specifier names (a file or a folder's index), or undefined. */
function resolveRelative(fromFile: string, specifier: string): string | undefined {
  const target = path.posix.join(path.posix.dirname(fromFile), specifier);
  for (const candidate of [`${target}.ts`, `${target}/index.ts`]) {
    if (existsSync(path.join(SERVER_SRC, candidate))) return candidate;
  }
  return undefined;
}

interface Edge {
  from: string;
  to: string;
}

function importGraph(): { files: string[]; edges: Edge[]; unresolved: string[] } {
  const files = sourceFiles();
  const edges: Edge[] = [];
  const unresolved: string[] = [];
  for (const file of files) {
    for (const specifier of importedSpecifiers(readFileSync(path.join(SERVER_SRC, file), 'utf8'))) {
      if (specifier === '@dsh-session-ls/shared') edges.push({ from: file, to: '@shared' });
      else if (specifier.startsWith('.')) {
        const to = resolveRelative(file, specifier);
        if (to === undefined) unresolved.push(`${file} -> ${specifier}`);
        else edges.push({ from: file, to });
      }
    }
  }
  return { files, edges, unresolved };
}

/** Every cycle's files (strongly connected components of more than one file, or a file importing itself). */
function cycles(files: string[], edges: Edge[]): string[][] {
  const next = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const { from, to } of edges) next.get(from)?.push(to);
  const order = new Map<string, number>();
  const lowest = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (file: string): void => {
    order.set(file, counter);
    lowest.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file) ?? []) {
      if (!next.has(to)) continue;
      if (!order.has(to)) {
        visit(to);
        lowest.set(file, Math.min(lowest.get(file)!, lowest.get(to)!));
      } else if (onStack.has(to)) {
        lowest.set(file, Math.min(lowest.get(file)!, order.get(to)!));
      }
    }
    if (lowest.get(file) === order.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || (next.get(file) ?? []).includes(file)) found.push(component.sort());
    }
  };
  for (const file of files) if (!order.has(file)) visit(file);
  return found;
}

describe('the server source forms one acyclic chain of layers (CONTRIBUTING.md)', () => {
  const { files, edges, unresolved } = importGraph();

  it('reads every relative import it finds', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(edges.length).toBeGreaterThan(files.length);
    expect(unresolved).toEqual([]);
  });

  it('imports only from its own layer or a lower one', () => {
    const upward = edges
      .filter(({ from, to }) => rank(layerOf(from)) < rank(to === '@shared' ? 'shared' : layerOf(to)))
      .map(({ from, to }) => `${from} (${layerOf(from)}) -> ${to} (${layerOf(to)})`);
    expect(upward).toEqual([]);
  });

  it('has no import cycle between files', () => {
    expect(cycles(files, edges)).toEqual([]);
  });

  it('finds an upward import and a cycle when there is one (the checks can fail)', () => {
    const planted: Edge[] = [
      { from: 'store/listing.ts', to: 'features/completion.ts' },
      { from: 'features/completion.ts', to: 'store/listing.ts' },
    ];
    expect(rank(layerOf(planted[0]!.from))).toBeLessThan(rank(layerOf(planted[0]!.to)));
    expect(cycles(['store/listing.ts', 'features/completion.ts'], planted)).toEqual([['features/completion.ts', 'store/listing.ts']]);
    expect(importedSpecifiers("import type { A } from './a';\nexport { b } from '../b';\nconst c = require('./c');")).toEqual(['./a', '../b', './c']);
  });
});

/** Whether a source text names Claude Code or Codex (in any case, as a word's start). */
const namesClaudeOrCodex = (text: string): boolean => /\b(claude|codex)/i.test(text);

/** Non-test TypeScript sources below `dir` (relative to the repository, `/`-separated), test support excluded. */
function productionSources(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) {
      if (name !== 'testing' && name !== 'node_modules' && name !== 'dist') found.push(...productionSources(full));
    } else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) {
      found.push(path.relative(REPO_ROOT, full).split(path.sep).join('/'));
    }
  }
  return found;
}

describe('only the agents table, the format registry and the adapters name an agent (docs/store-design.md)', () => {
  it('at most 5 production modules name Claude Code or Codex, each one of those', () => {
    const sources = ['shared/src', 'server/src', 'client-vscode/src'].flatMap((dir) => productionSources(path.join(REPO_ROOT, dir)));
    expect(sources.length).toBeGreaterThan(50);
    const naming = sources.filter((file) => namesClaudeOrCodex(readFileSync(path.join(REPO_ROOT, file), 'utf8'))).sort();
    expect(naming.length).toBeLessThanOrEqual(5);
    for (const file of naming) expect(file === 'shared/src/agents.ts' || file.startsWith('server/src/store/formats/'), file).toBe(true);
  });

  it('sees a name in any case and leaves other words alone (the check can fail)', () => {
    expect(namesClaudeOrCodex("import { claudeFormat } from './claudeCode';")).toBe(true);
    expect(namesClaudeOrCodex('// Codex rollouts')).toBe(true);
    expect(namesClaudeOrCodex('const decodex = 1; // a session of Gemini CLI')).toBe(false);
  });
});
