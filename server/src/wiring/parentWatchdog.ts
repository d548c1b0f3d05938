/**
 * The server's own watch on the client's process (`initialize`'s `processId`, or `--clientProcessId`),
 * replacing vscode-languageserver's, which exits when `process.kill(pid, 0)` throws anything: EPERM too
 * (a parent running as another user is alive) and ESRCH for a pid from another pid namespace (containers,
 * `docker exec`), so it killed servers whose client was alive.
 *
 * Here a parent is only taken for dead when it was seen alive and then is gone (ESRCH): a pid never seen
 * (another namespace, or a client that sent a wrong pid) leaves the server serving until its input closes,
 * which every transport reports on its own.
 */

/** What `process.kill(pid, 0)` says about a pid. */
export type ParentState = 'alive' | 'gone';

/** Probe a pid with signal 0: EPERM means it exists but is not ours to signal, which is alive. */
export function probeProcess(pid: number, kill: (pid: number, signal: 0) => void = (p, s) => process.kill(p, s)): ParentState {
  try {
    kill(pid, 0);
    return 'alive';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? 'alive' : 'gone';
  }
}

export interface ParentWatchdogOptions {
  /** Called once when a parent that was seen alive is gone. */
  onParentGone(pid: number): void;
  log(message: string): void;
  /** How often to look (default 3 s, as the library did). */
  intervalMs?: number;
  /** `process.kill(pid, 0)` (replaceable in tests). */
  kill?: (pid: number, signal: 0) => void;
}

export class ParentWatchdog {
  private timer?: NodeJS.Timeout;
  private watched?: number;
  private seenAlive = false;

  constructor(private readonly options: ParentWatchdogOptions) {}

  /** Watch `pid` (the first valid pid wins; later calls with another pid are ignored). */
  watch(pid: unknown): void {
    if (this.watched !== undefined || typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return;
    this.watched = pid;
    if (!this.check()) return;
    this.timer = setInterval(() => this.check(), this.options.intervalMs ?? 3000);
    this.timer.unref();
  }

  /** Look once; false once the watch is over (the parent went away, or was never seen). */
  private check(): boolean {
    const pid = this.watched!;
    const state = probeProcess(pid, this.options.kill);
    if (state === 'alive') {
      this.seenAlive = true;
      return true;
    }
    this.dispose();
    if (this.seenAlive) {
      this.options.log(`client process ${pid} is gone; exiting`);
      this.options.onParentGone(pid);
    } else {
      this.options.log(`client process ${pid} is not visible from here (another pid namespace?); serving until the input closes`);
    }
    return false;
  }

  dispose(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
