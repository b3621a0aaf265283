import { describe, expect, it } from 'vitest';
import { clockTicks, listeningInodes, parseProcStat, treeTicks, type ProcStat } from './proc-stat.js';

/** A /proc/<pid>/stat line as Linux writes it (52 fields), with the times given. */
function statLine(
  pid: number,
  comm: string,
  ppid: number,
  times: { utime: number; stime: number; cutime?: number; cstime?: number },
): string {
  const rest = Array.from({ length: 35 }, (_, i) => String(i));
  return [
    `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194560 1234 0 5 0`,
    times.utime,
    times.stime,
    times.cutime ?? 0,
    times.cstime ?? 0,
    `20 0 1 0 987654 123456789 2048`,
    ...rest,
  ].join(' ');
}

function stat(pid: number, ppid: number, utime: number, stime: number, cutime = 0, cstime = 0): ProcStat {
  return { pid, comm: `p${pid}`, state: 'S', ppid, utime, stime, cutime, cstime };
}

describe('/proc/<pid>/stat', () => {
  it('reads the parent, user, system and waited-for children times', () => {
    const parsed = parseProcStat(
      statLine(4242, 'redis-server', 1, { utime: 310, stime: 95, cutime: 7, cstime: 3 }),
    );
    expect(parsed).toEqual({
      pid: 4242,
      comm: 'redis-server',
      state: 'S',
      ppid: 1,
      utime: 310,
      stime: 95,
      cutime: 7,
      cstime: 3,
    });
  });

  it("takes the fields after the command name's last ')', whatever the name holds", () => {
    // A PostgreSQL backend renames itself; a name may hold spaces and parentheses.
    const parsed = parseProcStat(statLine(77, 'postgres: bench (x) 1', 76, { utime: 12, stime: 4 }));
    expect(parsed).toMatchObject({ pid: 77, comm: 'postgres: bench (x) 1', ppid: 76, utime: 12, stime: 4 });
  });

  it('refuses a line that is not a stat line, rather than reading zeros', () => {
    expect(() => parseProcStat('not a stat line')).toThrow(/not a \/proc\/<pid>\/stat line/);
    expect(() => parseProcStat('12 (x) S')).toThrow(/field 4 is not a number/);
  });

  it('reads a clock tick rate from getconf (100 when it cannot say)', () => {
    const ticks = clockTicks();
    expect(Number.isInteger(ticks)).toBe(true);
    expect(ticks).toBeGreaterThan(0);
  });
});

describe('CPU ticks of a process tree', () => {
  // A postmaster (10) with two backends (11, 12), one of them with a child (13), and strangers.
  const processes = [
    stat(1, 0, 1_000, 1_000),
    stat(10, 1, 50, 20, 300, 100),
    stat(11, 10, 400, 90),
    stat(12, 10, 30, 10),
    stat(13, 12, 5, 5),
    stat(20, 1, 9_999, 9_999),
    stat(21, 20, 9_999, 9_999),
  ];

  it("sums the root's own and ended children's ticks and every live descendant's", () => {
    // 10: 50+20+300+100; 11: 490; 12: 40; 13: 10.
    expect(treeTicks(10, processes)).toEqual({ ticks: 470 + 490 + 40 + 10, processes: 4 });
  });

  it('keeps a window whole when a child ends within it: its time moves to the parent', () => {
    const start = treeTicks(10, processes)!;
    // Backend 11 ran 60 more ticks, ended and was waited for; backend 12 ran 5 more.
    const end = treeTicks(10, [
      stat(10, 1, 50, 20, 300 + 460 + 90, 100),
      stat(12, 10, 35, 10),
      stat(13, 12, 5, 5),
    ])!;
    expect(end.ticks - start.ticks).toBe(60 + 5);
    expect(end.processes).toBe(3);
  });

  it('is undefined when the root is gone', () => {
    expect(treeTicks(99, processes)).toBeUndefined();
  });
});

describe('/proc/net/tcp', () => {
  const table = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31337 1 0000000000000000 100 0 0 10 0',
    '   1: 0100007F:2384 00000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 40001 1 0000000000000000 100 0 0 10 0',
    // An established connection to 6379 (a client's), not a listener.
    '   2: 0100007F:D431 0100007F:18EB 01 00000000:00000000 00:00000000 00000000     0        0 50505 1 0000000000000000 20 4 30 10 -1',
    '',
  ].join('\n');

  it('finds the inodes listening on a port, and only listeners', () => {
    expect(listeningInodes(table, 6379)).toEqual(['31337']);
    expect(listeningInodes(table, 9092)).toEqual(['40001']);
    expect(listeningInodes(table, 4222)).toEqual([]);
    expect(listeningInodes('', 6379)).toEqual([]);
  });
});
