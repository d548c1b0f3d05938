import { displaySafeText } from '@dsh-session-ls/shared';

/**
 * Untrusted multi-line text as a fenced code block: each line display-safe, and a fence longer than
 * any backtick run inside, so nothing in it can close the block or become a link, HTML or a command.
 */
export function fencedText(text: string): string {
  const lines = text.split(/\r\n|\r|\n/).map(displaySafeText);
  const body = lines.join('\n');
  const longestRun = (body.match(/`+/g) ?? []).reduce((longest, run) => Math.max(longest, run.length), 0);
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  return `${fence}text\n${body}\n${fence}`;
}
