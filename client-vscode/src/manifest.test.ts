import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_SESSION_REFERENCE_CONFIG, MAX_REFERENCES_CEILING, SETTINGS_SECTION } from '@dsh-session-ls/shared';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../test/support/conformance';
import { DOCUMENT_SELECTOR, PROMPT_LANGUAGE_ID, SETTING_KEYS } from './clientOptions';
import { ExtensionCommands } from './commandIds';

const root = path.join(__dirname, '..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const properties: Record<string, Record<string, unknown>> = manifest.contributes.configuration.properties;

/** The settings the LSP contract defines: key, type and default (null: no value of its own), in order. */
const contractSettings: Array<{ key: string; type: string; default: number | null }> = JSON.parse(
  readFileSync(path.join(REPO_ROOT, 'test', 'conformance', 'contract-settings.json'), 'utf8'),
);

describe('contributed settings', () => {
  it('are exactly the dshSessions keys the client sends, in order', () => {
    expect(Object.keys(properties)).toEqual(SETTING_KEYS.map((key) => `${SETTINGS_SECTION}.${key}`));
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
      items: { type: 'string', enum: ['dsh', 'claude-code', 'codex'] },
      minItems: 1,
      uniqueItems: true,
      default: null,
    });
    for (const key of ['claudeCodeHome', 'codexHome']) expect(properties[`dshSessions.${key}`]).toMatchObject({ type: ['string', 'null'], default: null });
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
    });
    for (const key of ['sessionsRoot', 'claudeCodeHome', 'codexHome']) {
      expect(String(properties[`dshSessions.${key}`]!.markdownDescription), key).toContain('**Remote**');
    }
    // A workspace in Restricted Mode cannot choose which stores are read.
    expect(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations).toEqual([
      'dshSessions.sessionsRoot',
      'dshSessions.agents',
      'dshSessions.claudeCodeHome',
      'dshSessions.codexHome',
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
    // Every setting but our own extension's (other agents), which the contract does not know.
    const extension = ['dshSessions.agents', 'dshSessions.claudeCodeHome', 'dshSessions.codexHome'];
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

  it('declares what vsce needs to package offline without asking', () => {
    expect(manifest.engines.vscode).toBe('^1.82.0');
    // @types/vscode must not describe a newer API than the engine accepts.
    expect(manifest.devDependencies['@types/vscode']).toBe('1.82.0');
    expect(manifest.publisher).toMatch(/^[a-z0-9][a-z0-9-]*$/);
    expect(manifest.main).toBe('./dist/extension.js');
    expect(manifest.files).toEqual(expect.arrayContaining(['dist/extension.js', 'dist/server.js', 'dist/summarizeWorker.js', 'dist/lookupWorker.js', 'LICENSE', 'README.md']));
    expect(manifest.scripts.package).toBe('vsce package --no-dependencies --allow-missing-repository --no-rewrite-relative-links');
    expect(manifest.scripts['vscode:prepublish']).toBe('node esbuild.mjs --production');
    expect(existsSync(path.join(root, 'LICENSE'))).toBe(true);
    expect(existsSync(path.join(root, 'README.md'))).toBe(true);
  });
});
