/** Sessions and documents shared by the editor-feature tests (not part of the server). */
import type { InMemorySession } from './inMemorySessionStore';
import { DshLog as SessionLogBuilder } from './testLogs';

/** A session with `exchanges` prompt/answer pairs of about `size` characters each, and maybe a title. */
export function conversationSession(
  id: string,
  options: { cwd?: string; title?: string; exchanges?: number; size?: number; createdAt?: number } = {},
): InMemorySession {
  const log = new SessionLogBuilder();
  const exchanges = options.exchanges ?? 1;
  const size = options.size ?? 20;
  for (let index = 0; index < exchanges; index++) {
    log.user(`question ${index} about ${id} `.padEnd(size, 'q'));
    log.assistant(`answer ${index} from ${id} `.padEnd(size, 'a'));
  }
  if (options.title !== undefined) log.title(options.title);
  return {
    header: { id, createdAt: options.createdAt ?? 1_767_225_600_000, ...(options.cwd === undefined ? {} : { cwd: options.cwd }) },
    events: log.events(),
  };
}
