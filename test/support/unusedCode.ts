/**
 * Finds code that nothing uses: the exported declarations of non-test sources, and the public
 * members of their exported classes, that no other non-test source refers to. Read with the
 * TypeScript language service (`findReferences`), so an import under another name, a re-export's
 * importer, a call through an interface the class implements and a use in another workspace
 * package all count. A re-export alone is not a use, nor is a reference from a test. A class
 * member called through an interface counts when the class says it `implements` that interface
 * (structural typing alone leaves the language service no link from the call to the member).
 *
 * A public module (a package's documented entry, such as `dsh-session-ls/client`) is used from
 * outside: what it exports, itself or by re-export, is kept, but each of its own exports and
 * public members must still be exercised by some source or test.
 *
 * Some production code exists for tests on purpose (a counter a test waits on, an oracle a
 * property test checks against): its declaration says so with the JSDoc tag `@forTests`. A tagged
 * declaration must be referenced by a test and by no production source, so the tag cannot hide
 * dead code or outlive its reason.
 */
import path from 'node:path';
import ts from 'typescript';

/** The JSDoc tag of a declaration kept for tests. */
export const FOR_TESTS_TAG = 'forTests';

/** Names the runtime calls by itself (`JSON.stringify` calls `toJSON`). */
const RUNTIME_PROTOCOL = new Set(['toJSON', 'toString', 'valueOf', 'then']);

export interface UnusedCodeInput {
  /** Every source the analysis reads, production and tests, absolute. */
  files: readonly string[];
  compilerOptions: ts.CompilerOptions;
  /** Whether a file is a test or test support (its references do not keep production code). */
  isTest: (file: string) => boolean;
  /**
   * Exports that are reached from outside the sources (a bundle's entry function, an editor
   * extension's `activate`): file (absolute) → names. Each must exist.
   */
  entryPoints: ReadonlyMap<string, readonly string[]>;
  /** Public modules (absolute): their exports, and what they re-export, are reached from outside. */
  publicModules?: ReadonlySet<string>;
}

export interface Finding {
  /** Absolute path of the declaring file. */
  file: string;
  line: number;
  name: string;
  problem: 'unused' | 'public but nothing exercises it' | 'used only by tests (tag it @forTests or remove it)' | `tagged @${typeof FOR_TESTS_TAG} but ${string}` | 'entry point not found';
}

function languageService(input: UnusedCodeInput): ts.LanguageService {
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => [...input.files],
    getScriptVersion: () => '1',
    getScriptSnapshot: (file) => {
      const text = ts.sys.readFile(file);
      return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
    },
    getCurrentDirectory: () => ts.sys.getCurrentDirectory(),
    getCompilationSettings: () => input.compilerOptions,
    getDefaultLibFileName: (options) => ts.getDefaultLibFilePath(options),
    fileExists: (file) => ts.sys.fileExists(file),
    readFile: (file) => ts.sys.readFile(file),
    readDirectory: (...args) => ts.sys.readDirectory(...args),
    directoryExists: (dir) => ts.sys.directoryExists(dir),
    getDirectories: (dir) => ts.sys.getDirectories(dir),
  };
  return ts.createLanguageService(host, ts.createDocumentRegistry());
}

const hasModifier = (node: ts.Node, kind: ts.SyntaxKind): boolean =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((modifier) => modifier.kind === kind);

const taggedForTests = (node: ts.Node): boolean => ts.getJSDocTags(node).some((tag) => tag.tagName.text === FOR_TESTS_TAG);

/** Whether the reference at `start` in `file` is the name in an `export { … }` clause (a re-export, not a use). */
function isExportClauseName(program: ts.Program, file: string, start: number): boolean {
  const source = program.getSourceFile(file);
  if (source === undefined) return false;
  const find = (node: ts.Node): ts.Node | undefined =>
    node.getStart(source) <= start && start < node.getEnd() ? (ts.forEachChild(node, find) ?? node) : undefined;
  for (let node = find(source); node !== undefined; node = node.parent) {
    if (ts.isExportSpecifier(node)) return true;
    if (ts.isStatement(node)) return false;
  }
  return false;
}

/** Whether a class member fulfils a member of a type declared outside the sources (a library calls it). */
function implementsLibraryMember(checker: ts.TypeChecker, cls: ts.ClassDeclaration, name: string, files: ReadonlySet<string>): boolean {
  for (const clause of cls.heritageClauses ?? []) {
    for (const type of clause.types) {
      const member = checker.getTypeAtLocation(type).getProperty(name);
      if (member?.declarations?.some((declaration) => !files.has(path.resolve(declaration.getSourceFile().fileName)))) return true;
    }
  }
  return false;
}

/** Unused production code, and misused `@forTests` tags, in `input.files`. */
export function findUnusedCode(input: UnusedCodeInput): Finding[] {
  const service = languageService(input);
  const program = service.getProgram();
  if (program === undefined) throw new Error('no program');
  const checker = program.getTypeChecker();
  const files = new Set(input.files.map((file) => path.resolve(file)));
  const findings: Finding[] = [];
  const seenEntryPoints = new Set<string>();
  const publicModules = new Set([...(input.publicModules ?? [])].map((file) => path.resolve(file)));

  const judge = (source: ts.SourceFile, declaration: ts.Node, name: ts.Identifier): void => {
    const file = path.resolve(source.fileName);
    const line = source.getLineAndCharacterOfPosition(name.getStart(source)).line + 1;
    const entry = input.entryPoints.get(file);
    if (entry?.includes(name.text)) {
      seenEntryPoints.add(`${file}#${name.text}`);
      return;
    }
    let inProduction = false;
    let inTests = false;
    for (const group of service.findReferences(source.fileName, name.getStart(source)) ?? []) {
      for (const reference of group.references) {
        if (reference.isDefinition) continue;
        const at = path.resolve(reference.fileName);
        if (!files.has(at)) continue;
        if (isExportClauseName(program, reference.fileName, reference.textSpan.start)) {
          if (publicModules.has(at)) inProduction = true;
          continue;
        }
        if (input.isTest(at)) inTests = true;
        else inProduction = true;
      }
    }
    const report = (problem: Finding['problem']) => findings.push({ file, line, name: name.text, problem });
    if (publicModules.has(file)) {
      if (!inProduction && !inTests) report('public but nothing exercises it');
    } else if (taggedForTests(declaration)) {
      if (inProduction) report(`tagged @${FOR_TESTS_TAG} but used in production`);
      else if (!inTests) report(`tagged @${FOR_TESTS_TAG} but no test uses it`);
    } else if (!inProduction) {
      report(inTests ? 'used only by tests (tag it @forTests or remove it)' : 'unused');
    }
  };

  for (const file of files) {
    if (input.isTest(file) || file.endsWith('.d.ts')) continue;
    const source = program.getSourceFile(file);
    if (source === undefined) continue;
    for (const statement of source.statements) {
      if (!hasModifier(statement, ts.SyntaxKind.ExportKeyword)) continue;
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name)) judge(source, declaration, declaration.name);
        }
        continue;
      }
      if (
        !(ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) || ts.isEnumDeclaration(statement)) ||
        statement.name === undefined
      ) {
        continue;
      }
      judge(source, statement, statement.name);
      if (!ts.isClassDeclaration(statement)) continue;
      for (const member of statement.members) {
        if (ts.isConstructorDeclaration(member) || member.name === undefined || !ts.isIdentifier(member.name)) continue;
        if (hasModifier(member, ts.SyntaxKind.PrivateKeyword) || hasModifier(member, ts.SyntaxKind.ProtectedKeyword)) continue;
        if (hasModifier(member, ts.SyntaxKind.OverrideKeyword) || RUNTIME_PROTOCOL.has(member.name.text)) continue;
        if (implementsLibraryMember(checker, statement, member.name.text, files)) continue;
        judge(source, member, member.name);
      }
    }
  }
  for (const [file, names] of input.entryPoints) {
    for (const name of names) if (!seenEntryPoints.has(`${file}#${name}`)) findings.push({ file, line: 0, name, problem: 'entry point not found' });
  }
  return findings;
}
