import { SESSION_REFERENCE_CONFIG_KEYS, SETTINGS_SECTION } from '@dsh-session-ls/shared';
import type { DocumentSelector, LanguageClientOptions } from 'vscode-languageclient/node';

/** The language the extension contributes for `*.prompt` files. */
export const PROMPT_LANGUAGE_ID = 'dsh-prompt';

/** The `dshSessions.*` setting keys, in the order of lsp-contract.md (Settings). */
export const SETTING_KEYS = ['sessionsRoot', 'targetSessionId', ...SESSION_REFERENCE_CONFIG_KEYS] as const;

/** One `dshSessions.*` setting key. */
export type SettingKey = (typeof SETTING_KEYS)[number];

/**
 * The documents the server serves: Markdown, plain text and prompt files, on disk or untitled.
 * Prompt files are also matched by name, whatever language another extension gives them. Virtual
 * documents (our own previews and transcripts) are left out on purpose.
 */
export const DOCUMENT_SELECTOR: DocumentSelector = [
  ...['markdown', 'plaintext', PROMPT_LANGUAGE_ID].flatMap((language) => [
    { scheme: 'file', language },
    { scheme: 'untitled', language },
  ]),
  { scheme: 'file', pattern: '**/*.prompt.md' },
  { scheme: 'file', pattern: '**/*.prompt' },
];

/** Reads one setting (a `vscode.WorkspaceConfiguration` fits). */
export interface SettingsReader {
  get<T>(key: string): T | undefined;
}

/** The `initializationOptions`: every `dshSessions.*` setting that has a value (`null` means unset, so it is left out). */
export function initializationOptionsFrom(settings: SettingsReader): Partial<Record<SettingKey, unknown>> {
  const options: Partial<Record<SettingKey, unknown>> = {};
  for (const key of SETTING_KEYS) {
    const value = settings.get<unknown>(key);
    if (value !== undefined && value !== null) options[key] = value;
  }
  return options;
}

/** The language client's options: what to serve, the initial settings, and the section kept in sync. */
export function languageClientOptions(settings: SettingsReader): LanguageClientOptions {
  return {
    documentSelector: DOCUMENT_SELECTOR,
    initializationOptions: initializationOptionsFrom(settings),
    synchronize: { configurationSection: SETTINGS_SECTION },
  };
}
