import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_SESSION_REFERENCE_CONFIG, MAX_REFERENCES_CEILING, SETTINGS_SECTION } from '@dsh-session-ls/shared';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../test/support/conformance';
import { FILE_MENTIONS_ORDERS } from '../../server/src/features/services';
import { DEFAULT_FILE_MENTIONS, SETTING_KEYS as SERVER_SETTING_KEYS } from '../../server/src/settings/settings';
import { DOCUMENT_SELECTOR, PROMPT_LANGUAGE_ID, SETTING_KEYS } from './clientOptions';
import { ExtensionCommands } from './commandIds';
import { MARKETPLACE_CATEGORIES, VSCODE_LANGUAGES, builtInLanguages, markdownLinks, pngSize } from './testing/marketplace';

const root = path.join(__dirname, '..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const properties: Record<string, Record<string, unknown>> = manifest.contributes.configuration.properties;

/** The settings the LSP contract defines: key, type and default (null: no value of its own), in order. */
const contractSettings: Array<{ key: string; type: string; default: number | null }> = JSON.parse(
  readFileSync(path.join(REPO_ROOT, 'test', 'conformance', 'contract-settings.json'), 'utf8'),
);

describe('contributed settings', () => {
  it('are exactly the dshSessions keys the client sends, in order, and the server reads', () => {
    expect(Object.keys(properties)).toEqual(SETTING_KEYS.map((key) => `${SETTINGS_SECTION}.${key}`));
    expect([...SETTING_KEYS]).toEqual([...SERVER_SETTING_KEYS]);
  });

  it("have dsh's defaults and limits", () => {
    for (const key of ['maxReferences', 'candidateLimit', 'maxReferenceBytes'] as const) {
      expect(properties[`dshSessions.${key}`]).toMatchObject({ type: 'integer', default: DEFAULT_SESSION_REFERENCE_CONFIG[key], minimum: 1 });
    }
    expect(properties['dshSessions.maxReferences']!.maximum).toBe(MAX_REFERENCES_CEILING);
    expect(properties['dshSessions.sessionsRoot']).toMatchObject({ type: ['string', 'null'], default: null });
    expect(properties['dshSessions.targetSessionId']).toMatchObject({ type: ['string', 'null'], default: null });
  });

  it('offer other agents off by default: agents unset means dsh alone, the homes unset mean the agents’ own defaults', () => {
    expect(properties['dshSessions.agents']).toMatchObject({
      type: ['array', 'null'],
      items: { type: 'string', enum: ['dsh', 'claude-code', 'codex', 'qwen-code', 'gemini', 'opencode'] },
      minItems: 1,
      uniqueItems: true,
      default: null,
    });
    for (const key of ['claudeCodeHome', 'codexHome', 'qwenCodeHome', 'geminiHome', 'opencodeHome']) expect(properties[`dshSessions.${key}`]).toMatchObject({ type: ['string', 'null'], default: null });
  });

  it('offer the place of file mentions with the server’s values and default', () => {
    expect(properties['dshSessions.fileMentions']).toMatchObject({ type: 'string', enum: [...FILE_MENTIONS_ORDERS], default: DEFAULT_FILE_MENTIONS });
    expect((properties['dshSessions.fileMentions']!.enumDescriptions as string[]).length).toBe(FILE_MENTIONS_ORDERS.length);
  });

  it('offer credential redaction, off by default as the server has it', () => {
    expect(properties['dshSessions.redactSecrets']).toMatchObject({ type: 'boolean', default: false });
  });

  it('have the scopes chosen for where VS Code reads them (README, Editors)', () => {
    // sessionsRoot is a path on the machine the server runs on: in a remote window VS Code reads it from the
    // Remote settings (or the workspace), never from the local User settings, where it would name a local folder.
    // The rest follow the user into remote windows and may differ per workspace. None is `resource` or
    // `language-overridable`: the client reads the section without a folder, so the server has one value per window.
    expect(Object.fromEntries(Object.entries(properties).map(([key, property]) => [key, property.scope]))).toEqual({
      'dshSessions.sessionsRoot': 'machine-overridable',
      'dshSessions.targetSessionId': 'window',
      'dshSessions.maxReferences': 'window',
      'dshSessions.candidateLimit': 'window',
      'dshSessions.maxReferenceBytes': 'window',
      // Other agents: the homes are paths on the server's machine, like sessionsRoot.
      'dshSessions.agents': 'window',
      'dshSessions.claudeCodeHome': 'machine-overridable',
      'dshSessions.codexHome': 'machine-overridable',
      'dshSessions.qwenCodeHome': 'machine-overridable',
      'dshSessions.geminiHome': 'machine-overridable',
      'dshSessions.opencodeHome': 'machine-overridable',
      'dshSessions.fileMentions': 'window',
      'dshSessions.redactSecrets': 'window',
    });
    for (const key of ['sessionsRoot', 'claudeCodeHome', 'codexHome', 'qwenCodeHome', 'geminiHome', 'opencodeHome']) {
      expect(String(properties[`dshSessions.${key}`]!.markdownDescription), key).toContain('**Remote**');
    }
    // A workspace in Restricted Mode cannot choose which stores are read.
    expect(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations).toEqual([
      'dshSessions.sessionsRoot',
      'dshSessions.agents',
      'dshSessions.claudeCodeHome',
      'dshSessions.codexHome',
      'dshSessions.qwenCodeHome',
      'dshSessions.geminiHome',
      'dshSessions.opencodeHome',
    ]);
  });

  it('are listed with their scopes in both READMEs, in order', () => {
    const scopes = Object.entries(properties).map(([key, property]) => [key, property.scope]);
    const readme = readFileSync(path.join(root, '..', 'README.md'), 'utf8');
    expect([...readme.matchAll(/^\| `(\w+)` \| `([a-z-]+)` \|/gm)].map((row) => [`dshSessions.${row[1]}`, row[2]])).toEqual(scopes);
    const extensionReadme = readFileSync(path.join(root, 'README.md'), 'utf8');
    expect([...extensionReadme.matchAll(/^\| `(dshSessions\.\w+)` \| [^|]+ \| ([a-z-]+) \|/gm)].map((row) => [row[1], row[2]])).toEqual(scopes);
  });

  it('each have a description', () => {
    for (const [key, property] of Object.entries(properties)) {
      expect(property.markdownDescription ?? property.description, key).toEqual(expect.stringMatching(/\S/));
    }
  });

  it('match the settings of the LSP contract', () => {
    const rows = contractSettings;
    // Every setting but our own additions (other agents, where file mentions go, redaction), which the contract does not know.
    const extension = ['dshSessions.agents', 'dshSessions.claudeCodeHome', 'dshSessions.codexHome', 'dshSessions.qwenCodeHome', 'dshSessions.geminiHome', 'dshSessions.opencodeHome', 'dshSessions.fileMentions', 'dshSessions.redactSecrets'];
    expect(rows.map((row) => `dshSessions.${row.key}`)).toEqual(Object.keys(properties).filter((key) => !extension.includes(key)));
    for (const row of rows) {
      const property = properties[`dshSessions.${row.key}`]!;
      expect(property.default, row.key).toBe(row.default);
      if (row.type === 'string') expect(property.type).toEqual(['string', 'null']);
      else expect(property.type).toBe('integer');
      const range = /^(\d+)\.\.(\d+)$/.exec(row.type);
      if (range) expect([property.minimum, property.maximum]).toEqual([Number(range[1]), Number(range[2])]);
      if (row.type === 'positive integer') expect(property.minimum).toBe(1);
    }
  });
});

describe('manifest', () => {
  it('contributes exactly the commands the extension registers, each titled', () => {
    const commands: Array<{ command: string; title: string }> = manifest.contributes.commands;
    expect(commands.map((c) => c.command).sort()).toEqual(Object.values(ExtensionCommands).sort());
    expect(commands.find((c) => c.command === ExtensionCommands.insertReference)!.title).toBe('Insert session reference…');
    expect(commands.find((c) => c.command === ExtensionCommands.previewPrepared)!.title).toBe('Preview what the model will see');
    expect(commands.find((c) => c.command === ExtensionCommands.openReferencedSession)!.title).toBe('Open referenced session');
    for (const entries of Object.values(manifest.contributes.menus) as Array<Array<{ command: string }>>) {
      for (const entry of entries) expect(Object.values(ExtensionCommands)).toContain(entry.command);
    }
  });

  it('activates for every language the server serves, and contributes the prompt language', () => {
    const languages = new Set(DOCUMENT_SELECTOR.flatMap((filter) => (typeof filter === 'object' && filter.language ? [filter.language] : [])));
    for (const language of languages) expect(manifest.activationEvents).toContain(`onLanguage:${language}`);
    expect(manifest.contributes.languages).toContainEqual(expect.objectContaining({ id: PROMPT_LANGUAGE_ID, extensions: ['.prompt'] }));
    const grammar = manifest.contributes.grammars.find((g: { language: string }) => g.language === PROMPT_LANGUAGE_ID);
    expect(existsSync(path.join(root, grammar.path))).toBe(true);
    expect(manifest.files).toContain(grammar.path.replace(/^\.\//, ''));
  });

  it('activates only on languages that exist: its own, or one VS Code defines', () => {
    const contributed: string[] = manifest.contributes.languages.map((language: { id: string }) => language.id);
    const activations: string[] = manifest.activationEvents;
    for (const event of activations) expect(event, 'only onLanguage activations').toMatch(/^onLanguage:/);
    const unknown = activations.map((event) => event.slice('onLanguage:'.length)).filter((id) => !contributed.includes(id) && !VSCODE_LANGUAGES.includes(id));
    expect(unknown).toEqual([]);
    // `prompt` is VS Code's language for *.prompt.md files, which the server serves by name.
    expect(activations).toContain('onLanguage:prompt');
    expect(DOCUMENT_SELECTOR).toContainEqual({ scheme: 'file', pattern: '**/*.prompt.md' });
  });

  const shipped = builtInLanguages();
  it.skipIf(!shipped.languages)(`names only languages the real VS Code defines ${shipped.reason ?? ''}`, () => {
    // plaintext is the core's own (no extension contributes it); every other one comes from a built-in extension.
    expect(VSCODE_LANGUAGES.filter((id) => id !== 'plaintext' && !shipped.languages!.has(id))).toEqual([]);
    expect(shipped.languages!.has('plaintext')).toBe(false);
  });

  it('declares what vsce needs to package offline without asking', () => {
    expect(manifest.engines.vscode).toBe('^1.82.0');
    // @types/vscode must not describe a newer API than the engine accepts.
    expect(manifest.devDependencies['@types/vscode']).toBe('1.82.0');
    expect(manifest.main).toBe('./dist/extension.js');
    expect(manifest.files).toEqual(
      expect.arrayContaining(['dist/extension.js', 'dist/server.js', 'dist/summarizeWorker.js', 'LICENSE', 'README.md', 'CHANGELOG.md']),
    );
    expect(manifest.scripts.package).toMatch(/^vsce package --no-dependencies /);
    // The manifest is complete: vsce is not told to let a missing repository or license pass.
    expect(manifest.scripts.package).not.toMatch(/--allow-missing-repository|--skip-license|--no-rewrite-relative-links/);
    expect(manifest.scripts['vscode:prepublish']).toBe('node esbuild.mjs --production');
    for (const file of manifest.files as string[]) expect(existsSync(path.join(root, file)) || file.startsWith('dist/'), file).toBe(true);
  });
});

describe('the Marketplace listing', () => {
  // Read leniently, so a manifest without them fails the tests below rather than their collection.
  const repository = (manifest.repository ?? {}) as { type?: string; url?: string; directory?: string };
  const repositoryUrl = String(repository.url).replace(/\.git$/, '');
  const option = (name: string) => new RegExp(`--${name} (\\S+)`).exec(manifest.scripts.package as string)?.[1];

  it('has a real publisher id, not the project name put there as a placeholder', () => {
    // The Marketplace's rule for a publisher id: letters, digits and hyphens, starting with a letter or digit.
    expect(manifest.publisher).toMatch(/^[a-z0-9][a-z0-9-]*$/);
    expect(manifest.publisher).not.toBe('dsh-session-ls');
    expect(manifest.publisher).not.toMatch(/placeholder|publisher|example|todo/i);
  });

  it('has a 128×128 or 256×256 PNG icon that is packaged', () => {
    expect(manifest.icon).toMatch(/\.png$/);
    expect(manifest.files).toContain(manifest.icon);
    const { width, height } = pngSize(readFileSync(path.join(root, manifest.icon as string)));
    expect([128, 256]).toContain(width);
    expect(height).toBe(width);
  });

  it('names the repository, the same as the root package.json, and where to report bugs', () => {
    const rootManifest = JSON.parse(readFileSync(path.join(root, '..', 'package.json'), 'utf8'));
    expect(repository).toEqual({ type: 'git', url: rootManifest.repository.url, directory: 'client-vscode' });
    expect(repositoryUrl).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/);
    expect(manifest.bugs.url).toBe(`${repositoryUrl}/issues`);
    expect(rootManifest.bugs.url).toBe(manifest.bugs.url);
    expect(manifest.homepage).toMatch(new RegExp(`^${repositoryUrl.replace(/\./g, '\\.')}/`));
  });

  it("rewrites the README's relative links into the extension's folder of the repository", () => {
    // vsce would base them on the repository's root (it ignores `directory`): the package script says where.
    expect(option('baseContentUrl')).toBe(`${repositoryUrl}/blob/HEAD/${repository.directory}`);
    expect(option('baseImagesUrl')).toBe(`${repositoryUrl}/raw/HEAD/${repository.directory}`);
  });

  it('has categories the Marketplace knows, not just "Other", and keywords', () => {
    expect(manifest.categories.length).toBeGreaterThan(0);
    for (const category of manifest.categories as string[]) expect(MARKETPLACE_CATEGORIES).toContain(category);
    expect(manifest.categories).not.toEqual(['Other']);
    expect(manifest.keywords).toEqual(expect.arrayContaining(['dsh', 'deepseek', 'claude code', 'codex']));
  });

  it('has a README with a screenshot in the package, commands, settings and troubleshooting', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const images = markdownLinks(readme).filter((link) => link.image);
    expect(images.length).toBeGreaterThan(0);
    for (const { target } of images) {
      // Relative, to a PNG the package holds (vsce points it at the repository when packaging).
      expect(target).toMatch(/^[\w./-]+\.png$/);
      expect(manifest.files).toContain(path.posix.normalize(target));
      expect(pngSize(readFileSync(path.join(root, target))).width).toBeGreaterThan(0);
    }
    const headings = [...readme.matchAll(/^##+ (.+)$/gm)].map((match) => match[1]);
    expect(headings).toEqual(expect.arrayContaining(['Commands', 'Settings', 'Other agents', 'Troubleshooting']));
    for (const command of manifest.contributes.commands as Array<{ title: string; category: string }>) {
      expect(readme).toContain(`${command.category}: ${command.title}`);
    }
    expect(readme).toContain('"dshSessions.agents": ["dsh", "claude-code", "codex", "gemini"]');
  });

  it('has a CHANGELOG whose newest entry is this version', () => {
    const changelog = readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
    expect(/^## (\S+)/m.exec(changelog)?.[1]).toBe(manifest.version);
  });

  it('has a LICENSE that says what the manifest says', () => {
    expect(manifest.license).toBe('MIT');
    expect(readFileSync(path.join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
  });
});
