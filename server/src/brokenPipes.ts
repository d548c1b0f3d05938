/**
 * A reader that goes away (`dsh-session-ls candidates | head`, an editor killed while its server
 * still logs) breaks the pipe behind stdout or stderr: the next write fails with EPIPE, reported as
 * the stream's 'error' event. Unheard, that event is an uncaught exception: the CLI died of it with a
 * stack trace, and the server logged it to the same broken stderr, which failed the same way, in a
 * loop that kept a core busy and starved the timers that would have stopped the server.
 *
 * Heard here, the error only closes the stream: what is written to it afterwards is dropped
 * (`logToStderr` checks first), and the process goes on to end as it would have (the CLI once its
 * answer is made and its cache saved, the server when its client or its input is gone).
 */
export function surviveBrokenPipes(streams: readonly NodeJS.WritableStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) stream.on('error', () => undefined);
}
