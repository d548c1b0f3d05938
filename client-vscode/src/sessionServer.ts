import { SessionCommands, type SessionReferenceMentionCandidate } from '@dsh-session-ls/shared';
import type { CancellationToken } from 'vscode';
import { ExecuteCommandRequest, type ExecuteCommandParams } from 'vscode-languageclient/node';
import { parseCandidates } from './quickPickItems';

/** The part of the language client the session commands need. */
export interface RequestSender {
  sendRequest<R>(type: typeof ExecuteCommandRequest.type, params: ExecuteCommandParams, token?: CancellationToken): Promise<R>;
}

function markdownAnswer(command: string, result: unknown): string {
  if (typeof result !== 'string') throw new Error(`${command} answered without Markdown text`);
  return result;
}

/** The server's `dshSession.*` commands, called through the language client with ONE argument object each. */
export class SessionServer {
  constructor(private readonly client: RequestSender) {}

  private execute<R>(command: string, argument: object, token?: CancellationToken): Promise<R> {
    return this.client.sendRequest<R>(ExecuteCommandRequest.type, { command, arguments: [argument] }, token);
  }

  /** Candidates for a query, ranked for the document's workspace folder. */
  async candidates(query: string, documentUri: string, token?: CancellationToken): Promise<SessionReferenceMentionCandidate[]> {
    const result = await this.execute<unknown>(SessionCommands.candidates, { query, textDocument: { uri: documentUri } }, token);
    return parseCandidates(result);
  }

  /** Markdown: what the model will see for an open document. */
  async preview(documentUri: string): Promise<string> {
    return markdownAnswer(SessionCommands.preview, await this.execute<unknown>(SessionCommands.preview, { textDocument: { uri: documentUri } }));
  }

  /** Markdown: a session's transcript as the user saw it (`agent`: another agent's session). */
  async transcript(sessionId: string, agent?: string): Promise<string> {
    const argument = agent === undefined ? { sessionId } : { sessionId, agent };
    return markdownAnswer(SessionCommands.transcript, await this.execute<unknown>(SessionCommands.transcript, argument));
  }
}
