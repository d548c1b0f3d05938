import { AGENT_HOME_SETTINGS, SESSION_REFERENCE_CONFIG_KEYS, SETTINGS_SECTION, SessionCommands, type PrepareDocumentArgument } from '@dsh-session-ls/shared';
import type { DocumentSelector, ExecuteCommandMiddleware, LanguageClientOptions } from 'vscode-languageclient/node';

/** The language the extension contributes for `*.prompt` files. */
export const PROMPT_LANGUAGE_ID = 'dsh-prompt';

/** The `dshSessions.*` setting keys, in the order of lsp-contract.md (Settings). */
export const SETTING_KEYS = ['sessionsRoot', 'targetSessionId', ...SESSION_REFERENCE_CONFIG_KEYS, 'agents', ...AGENT_HOME_SETTINGS, 'fileMentions', 'redactSecrets'] as const;

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

/**
 * The source document of a `dshSession.preview` call that names only one (`{ textDocument: { uri } }`,
 * or that object as a JSON string, as the server accepts it); undefined for any other argument.
 */
export function previewSourceOf(args: readonly unknown[]): string | undefined {
  if (args.length !== 1) return undefined;
  let argument = args[0];
  if (typeof argument === 'string') {
    try {
      argument = JSON.parse(argument);
    } catch {
      return undefined;
    }
  }
  if (typeof argument !== 'object' || argument === null || Array.isArray(argument)) return undefined;
  // A call with a target or a text asks for something the preview document (keyed by its source) does not show.
  if (Object.keys(argument).some((key) => key !== 'textDocument')) return undefined;
  // Field names from shared/'s command map; the value is still checked.
  const uri: unknown = (argument as Partial<Pick<PrepareDocumentArgument, 'textDocument'>>).textDocument?.uri;
  return typeof uri === 'string' ? uri : undefined;
}

/** Opens the read-only preview document of a source document (given by URI). */
export type PreviewOpener = (sourceUri: string) => Promise<void>;

/**
 * `workspace/executeCommand` middleware: VS Code drops a command's result, so the Markdown of the
 * server's `dshSession.preview` (run from its "Preview what the model will see" code action) would
 * vanish; it opens the preview document instead. Every other command goes to the server as usual.
 */
export function previewCommandMiddleware(openPreview: PreviewOpener): ExecuteCommandMiddleware {
  return {
    executeCommand: (command, args, next): unknown => {
      const source = command === SessionCommands.preview ? previewSourceOf(args) : undefined;
      return source === undefined ? next(command, args) : openPreview(source);
    },
  };
}

/** The language client's options: what to serve, the initial settings, the section kept in sync, and the preview middleware. */
export function languageClientOptions(settings: SettingsReader, openPreview: PreviewOpener): LanguageClientOptions {
  return {
    documentSelector: DOCUMENT_SELECTOR,
    initializationOptions: initializationOptionsFrom(settings),
    synchronize: { configurationSection: SETTINGS_SECTION },
    middleware: previewCommandMiddleware(openPreview),
  };
}
