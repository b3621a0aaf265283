/**
 * CPU time and peak memory of a worker process, from Linux's /proc (the bench runs where the
 * services are: Linux). Elsewhere the figures are reported as NaN rather than guessed.
 */
import { readFile } from 'node:fs/promises';
import type { ProcessUsage } from './types.js';

/** Clock ticks per second of /proc/<pid>/stat times; 100 on every Linux we know of. */
const CLOCK_TICKS = 100;

export async function processUsage(pid: number): Promise<ProcessUsage> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    return {
      pid,
      cpuSeconds: (utime + stime) / CLOCK_TICKS,
      peakRssMiB: hwm ? Number(hwm[1]) / 1024 : NaN,
    };
  } catch {
    return { pid, cpuSeconds: NaN, peakRssMiB: NaN };
  }
}
