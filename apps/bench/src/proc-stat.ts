/**
 * CPU time of processes on this machine, from Linux's /proc: what the bench reads for worker
 * processes and for the servers (a redis-server, a nats-server, a Kafka broker, a PostgreSQL
 * postmaster and its backends). The parsing is kept apart from the reading so it can be specified
 * without a process to read.
 *
 * /proc/<pid>/stat counts in clock ticks (`getconf CLK_TCK`, 100 on every Linux we know of), summed
 * over the process's threads; `cutime`/`cstime` are the ticks of its children that ended and were
 * waited for, which is where a PostgreSQL backend's CPU goes when its connection closes.
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';

/** The fields of /proc/<pid>/stat the bench uses; times in clock ticks. */
export interface ProcStat {
  pid: number;
  /** The command name, without its parentheses (may contain spaces and parentheses). */
  comm: string;
  state: string;
  ppid: number;
  utime: number;
  stime: number;
  /** Ticks of ended, waited-for children. */
  cutime: number;
  cstime: number;
}

/**
 * Parses one /proc/<pid>/stat line (proc(5)). The command name sits in parentheses and may
 * itself contain spaces or ')', so the fields after it are taken from after the last ')'.
 */
export function parseProcStat(text: string): ProcStat {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`not a /proc/<pid>/stat line: '${text.slice(0, 80)}'`);
  // After ')': state(3) ppid(4) pgrp(5) session(6) tty_nr(7) tpgid(8) flags(9) minflt(10)
  // cminflt(11) majflt(12) cmajflt(13) utime(14) stime(15) cutime(16) cstime(17) ...
  const fields = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const field = (n: number): number => {
    const value = Number(fields[n - 3]);
    if (!Number.isFinite(value)) throw new Error(`/proc/<pid>/stat field ${n} is not a number: '${text}'`);
    return value;
  };
  return {
    pid: Number(text.slice(0, open).trim()),
    comm: text.slice(open + 1, close),
    state: fields[0] ?? '?',
    ppid: field(4),
    utime: field(14),
    stime: field(15),
    cutime: field(16),
    cstime: field(17),
  };
}

let ticks: number | undefined;

/** Clock ticks per second of /proc times (`getconf CLK_TCK`); 100 when getconf cannot say. */
export function clockTicks(): number {
  if (ticks === undefined) {
    try {
      const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 5_000 }).trim());
      ticks = Number.isInteger(value) && value > 0 ? value : 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** The process's parsed stat, or undefined once it is gone (or on a system without /proc). */
export async function readProcStat(pid: number): Promise<ProcStat | undefined> {
  try {
    return parseProcStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** User + system CPU seconds a process has used so far; undefined once it is gone. */
export async function cpuSeconds(pid: number): Promise<number | undefined> {
  const stat = await readProcStat(pid);
  return stat === undefined ? undefined : (stat.utime + stat.stime) / clockTicks();
}

/** The stat of every process on this machine (one pass over /proc). */
export async function allProcStats(): Promise<ProcStat[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  const stats = await Promise.all(entries.filter((e) => /^\d+$/.test(e)).map((e) => readProcStat(Number(e))));
  return stats.filter((s): s is ProcStat => s !== undefined);
}

/**
 * CPU ticks of a process tree out of one /proc pass: the root's own and its ended children's, and
 * the same for every live descendant. A descendant that ends between two readings moves from the
 * live sum into its parent's cutime/cstime once waited for, so the difference of two readings
 * stays whole (a PostgreSQL backend whose connection closed within the window still counts).
 * Undefined when the root is not among `stats`.
 */
export function treeTicks(
  rootPid: number,
  stats: readonly ProcStat[],
): { ticks: number; processes: number } | undefined {
  const byParent = new Map<number, ProcStat[]>();
  let root: ProcStat | undefined;
  for (const stat of stats) {
    if (stat.pid === rootPid) root = stat;
    const siblings = byParent.get(stat.ppid);
    if (siblings) siblings.push(stat);
    else byParent.set(stat.ppid, [stat]);
  }
  if (root === undefined) return undefined;
  let total = 0;
  let processes = 0;
  const stack = [root];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const stat = stack.pop()!;
    if (seen.has(stat.pid)) continue;
    seen.add(stat.pid);
    total += stat.utime + stat.stime + stat.cutime + stat.cstime;
    processes++;
    stack.push(...(byParent.get(stat.pid) ?? []));
  }
  return { ticks: total, processes };
}

/** CPU seconds of a process tree (see {@link treeTicks}) now; undefined when the root is gone. */
export async function treeCpuSeconds(
  rootPid: number,
): Promise<{ seconds: number; processes: number } | undefined> {
  const tree = treeTicks(rootPid, await allProcStats());
  return tree === undefined ? undefined : { seconds: tree.ticks / clockTicks(), processes: tree.processes };
}

/**
 * Socket inodes listening on a TCP port, from a /proc/net/tcp or /proc/net/tcp6 table: the
 * local address is HEX_IP:HEX_PORT, state 0A is LISTEN, the tenth column the inode.
 */
export function listeningInodes(table: string, port: number): string[] {
  const inodes: string[] = [];
  for (const line of table.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length > 9 && cols[3] === '0A' && parseInt(cols[1]!.split(':')[1] ?? '', 16) === port)
      inodes.push(cols[9]!);
  }
  return inodes;
}

/** The pid of the process listening on a TCP port of this host, from /proc; undefined when none. */
export async function listenerPid(port: number): Promise<number | undefined> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const inode of listeningInodes(await readFile(table, 'utf8').catch(() => ''), port))
      inodes.add(inode);
  }
  if (inodes.size === 0) return undefined;
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const fds = await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const link = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode !== undefined && inodes.has(inode)) return Number(entry);
    }
  }
  return undefined;
}
