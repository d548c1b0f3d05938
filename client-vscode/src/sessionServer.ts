import {
  SessionCommands,
  sessionCommandParams,
  type ForeignAgent,
  type SessionCommandArgument,
  type SessionCommandName,
  type SessionCommandResult,
} from '@dsh-session-ls/shared';
import type { CancellationToken } from 'vscode';
import { ExecuteCommandRequest, type ExecuteCommandParams } from 'vscode-languageclient/node';
import { parseCandidates } from './quickPickItems';

/** The part of the language client the session commands need. */
export interface RequestSender {
  sendRequest<R>(type: typeof ExecuteCommandRequest.type, params: ExecuteCommandParams, token?: CancellationToken): Promise<R>;
}

function markdownAnswer(command: SessionCommandName, result: unknown): string {
  if (typeof result !== 'string') throw new Error(`${command} answered without Markdown text`);
  return result;
}

/**
 * The server's `dshSession.*` commands, called through the language client with ONE argument object
 * each, typed by shared/'s `SessionCommandMap`. An answer is checked before use (the server is another
 * process), so `execute` gives it as unknown.
 */
export class SessionServer {
  constructor(private readonly client: RequestSender) {}

  private execute<C extends SessionCommandName>(command: C, argument: SessionCommandArgument<C>, token?: CancellationToken): Promise<unknown> {
    return this.client.sendRequest<unknown>(ExecuteCommandRequest.type, sessionCommandParams(command, argument), token);
  }

  /** Candidates for a query, ranked for the document's workspace folder. */
  async candidates(query: string, documentUri: string, token?: CancellationToken): Promise<SessionCommandResult<typeof SessionCommands.candidates>> {
    return parseCandidates(await this.execute(SessionCommands.candidates, { query, textDocument: { uri: documentUri } }, token));
  }

  /** Markdown: what the model will see for an open document. */
  async preview(documentUri: string): Promise<SessionCommandResult<typeof SessionCommands.preview>> {
    return markdownAnswer(SessionCommands.preview, await this.execute(SessionCommands.preview, { textDocument: { uri: documentUri } }));
  }

  /** Markdown: a session's transcript as the user saw it (`agent`: another agent's session). */
  async transcript(sessionId: string, agent?: ForeignAgent): Promise<SessionCommandResult<typeof SessionCommands.transcript>> {
    const argument = agent === undefined ? { sessionId } : { sessionId, agent };
    return markdownAnswer(SessionCommands.transcript, await this.execute(SessionCommands.transcript, argument));
  }
}
