/**
 * CPU time and peak memory of a worker process, from Linux's /proc (the bench runs where the
 * services are: Linux). Elsewhere the figures are reported as NaN rather than guessed.
 */
import { readFile } from 'node:fs/promises';
import { clockTicks, readProcStat } from './proc-stat.js';
import type { ProcessUsage } from './types.js';

export async function processUsage(pid: number): Promise<ProcessUsage> {
  const stat = await readProcStat(pid);
  if (stat === undefined) return { pid, cpuSeconds: NaN, peakRssMiB: NaN };
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
  return {
    pid,
    cpuSeconds: (stat.utime + stat.stime) / clockTicks(),
    peakRssMiB: hwm ? Number(hwm[1]) / 1024 : NaN,
  };
}
