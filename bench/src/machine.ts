/** The machine a run measured on, for the top of the results. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

/** What the results record about the machine. */
export interface MachineInfo {
  nproc: number;
  cpuModel: string;
  memoryGb: number;
  node: string;
  os: string;
  zstd: string;
  date: string;
  /** 1-minute load average when the run started (other work on a shared machine skews absolute times). */
  loadAtStart: number;
}

/** Describe this machine now. */
export function describeMachine(): MachineInfo {
  let zstd = 'not found';
  try {
    zstd = execFileSync('zstd', ['--version'], { encoding: 'utf8' }).trim().replace(/^\*+\s*|\s*\*+$/g, '');
  } catch {
    // Only the generator needs it (on Node 20); the results just say so.
  }
  let nproc = os.cpus().length;
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    // os.cpus() is the fallback where nproc is missing.
  }
  return {
    nproc,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    zstd,
    date: new Date().toISOString(),
    loadAtStart: os.loadavg()[0],
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc (undefined elsewhere). */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name), in ticks of 1/100 s.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}
