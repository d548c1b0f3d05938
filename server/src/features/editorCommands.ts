import { SessionCommands } from '@dsh-session-ls/shared';
import { commandArgument } from './commandArguments';
import { UnknownCommandError } from './errors';
import { previewCommand } from './modelPreview';
import type { SessionServices } from './services';
import { sessionLogFileReader } from './sessionLogFile';
import { transcriptCommand, type SessionLogReader } from './transcript';

/** The commands the editor features add (lsp-contract.md, Commands): both answer Markdown. */
export const EDITOR_COMMANDS: readonly string[] = [SessionCommands.transcript, SessionCommands.preview];

/**
 * Run `dshSession.transcript` or `dshSession.preview`; any other command is MethodNotFound. The transcript
 * reads whole logs with `readLog`, by default from the transcript files under the current sessions root.
 */
export async function executeEditorCommand(
  command: string,
  args: unknown,
  services: SessionServices,
  signal?: AbortSignal,
  readLog?: SessionLogReader,
): Promise<string> {
  switch (command) {
    case SessionCommands.transcript:
      return transcriptCommand(
        commandArgument(SessionCommands.transcript, args),
        services,
        signal,
        readLog ?? sessionLogFileReader(() => services.settings().sessionsRoot, services.sessions),
      );
    case SessionCommands.preview:
      return previewCommand(commandArgument(SessionCommands.preview, args), services, signal);
    default:
      throw new UnknownCommandError(command);
  }
}
