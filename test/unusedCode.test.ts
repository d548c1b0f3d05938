// No dead code in the product: every exported declaration of shared/, server/, client-vscode/ and
// bench/ (and every public member of an exported class) is used by another production source, or
// is tagged `@forTests` and used by tests only (test/support/unusedCode.ts). Read from the
// sources with the TypeScript language service, so a declaration whose last use goes away fails
// `npm test` instead of waiting for someone to notice by hand.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/conformance';
import { FOR_TESTS_TAG, findUnusedCode, type Finding, type UnusedCodeInput } from './support/unusedCode';

/** The folders read: the three packages, the bench, and the tests that may keep `@forTests` code. */
const SOURCE_DIRS = ['shared/src', 'server/src', 'client-vscode/src', 'bench/src', 'test'];

function typescriptFiles(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) {
      if (name !== 'node_modules' && name !== 'dist' && name !== 'fixtures') found.push(...typescriptFiles(full));
    } else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) {
      found.push(full);
    }
  }
  return found;
}

/** Tests, test support, and the tests' own helpers and fixtures. */
function isTest(file: string): boolean {
  const relative = path.relative(REPO_ROOT, file).split(path.sep).join('/');
  return relative.endsWith('.test.ts') || relative.startsWith('test/') || relative.includes('/testing/');
}

/**
 * One program over every package, each importing the others' sources (as the tests do), so that a
 * use in the bench or the extension keeps a server or shared declaration.
 */
function repositoryOptions(): ts.CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Preserve,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
    lib: ['lib.es2024.d.ts', 'lib.dom.d.ts'],
    types: ['node', 'vscode'],
    typeRoots: [path.join(REPO_ROOT, 'node_modules', '@types')],
    paths: {
      '@dsh-session-ls/shared': [path.join(REPO_ROOT, 'shared', 'src', 'index.ts')],
      'dsh-session-ls/dist/*': [path.join(REPO_ROOT, 'server', 'src', '*')],
    },
  };
}

/** Exports reached from outside the sources: the bundles main.ts loads by file name, and the extension's hooks. */
const ENTRY_POINTS = new Map<string, readonly string[]>([
  [path.join(REPO_ROOT, 'server', 'src', 'serverProcess.ts'), ['startServer']],
  [path.join(REPO_ROOT, 'server', 'src', 'cliProcess.ts'), ['runCliProcess']],
  [path.join(REPO_ROOT, 'client-vscode', 'src', 'extension.ts'), ['activate', 'deactivate']],
]);

/**
 * The packages' documented modules: `dsh-session-ls/client` (server/pack.mjs, README "Node library"),
 * its entry and the modules of the public types and errors it re-exports.
 */
const PUBLIC_MODULES = new Set(['index.ts', 'types.ts', 'errors.ts'].map((file) => path.join(REPO_ROOT, 'server', 'src', 'client', file)));

const show = (findings: readonly Finding[]): string[] =>
  findings.map((finding) => `${path.relative(REPO_ROOT, finding.file)}:${finding.line} ${finding.name}: ${finding.problem}`);

describe('production code that nothing uses', () => {
  it('finds none in the repository', () => {
    const files = SOURCE_DIRS.flatMap((dir) => typescriptFiles(path.join(REPO_ROOT, dir)));
    const findings = findUnusedCode({ files, compilerOptions: repositoryOptions(), isTest, entryPoints: ENTRY_POINTS, publicModules: PUBLIC_MODULES });
    expect(show(findings)).toEqual([]);
  }, 300_000);

  describe('the check can fail', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'unused-code-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const write = (name: string, text: string): string => {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      return file;
    };
    const input = (files: string[], entryPoints = new Map<string, readonly string[]>(), publicModules = new Set<string>()): UnusedCodeInput => ({
      files,
      compilerOptions: { ...repositoryOptions(), paths: {}, types: [] },
      isTest: (file) => file.endsWith('.test.ts'),
      entryPoints,
      publicModules,
    });

    it('reports an export, a class member and a tag that nothing justifies, and keeps what is used', () => {
      const library = write(
        'library.ts',
        [
          'export function used(): number { return 1; }',
          'export function dead(): number { return 2; }',
          'export function testedOnly(): number { return 3; }',
          `/** @${FOR_TESTS_TAG} */ export function oracle(): number { return 4; }`,
          `/** @${FOR_TESTS_TAG} */ export function taggedButUsed(): number { return 5; }`,
          `/** @${FOR_TESTS_TAG} */ export function taggedUnused(): number { return 6; }`,
          'export interface Shape { area(): number }',
          'export class Square implements Shape {',
          '  area(): number { return 1; }',
          '  deadMethod(): number { return 2; }',
          '  toJSON(): unknown { return {}; }',
          '}',
          'export { used as renamed };',
        ].join('\n'),
      );
      const user = write(
        'user.ts',
        [
          "import { renamed, taggedButUsed, type Shape, Square } from './library';",
          'export function main(shape: Shape = new Square()): number { return renamed() + taggedButUsed() + shape.area(); }',
        ].join('\n'),
      );
      const test = write('library.test.ts', ["import { testedOnly, oracle, dead } from './library';", 'void testedOnly; void oracle; void dead;'].join('\n'));
      const findings = findUnusedCode(input([library, user, test], new Map([[user, ['main']]])));
      expect(findings.map((finding) => `${finding.name}: ${finding.problem}`).sort()).toEqual([
        'dead: used only by tests (tag it @forTests or remove it)',
        'deadMethod: unused',
        'taggedButUsed: tagged @forTests but used in production',
        'taggedUnused: tagged @forTests but no test uses it',
        'testedOnly: used only by tests (tag it @forTests or remove it)',
      ]);
    });

    it('keeps what a public module exports or re-exports, but not a public member nothing exercises', () => {
      const contract = write('contract.ts', 'export const CODES = [1, 2];\nexport const INTERNAL = 3;\n');
      const api = write(
        'api.ts',
        [
          "export { CODES } from './contract';",
          'export class Client {',
          '  tested(): number { return 1; }',
          '  untested(): number { return 2; }',
          '}',
        ].join('\n'),
      );
      const test = write('api.test.ts', ["import { Client } from './api';", 'void new Client().tested();'].join('\n'));
      const findings = findUnusedCode(input([contract, api, test], new Map(), new Set([api])));
      expect(findings.map((finding) => `${finding.name}: ${finding.problem}`).sort()).toEqual(['INTERNAL: unused', 'untested: public but nothing exercises it']);
    });

    it('reports an entry point that is not there', () => {
      const file = write('entry.ts', 'export function start(): void {}\n');
      const findings = findUnusedCode(input([file], new Map([[file, ['start', 'gone']]])));
      expect(findings.map((finding) => `${finding.name}: ${finding.problem}`)).toEqual(['gone: entry point not found']);
    });
  });
});
