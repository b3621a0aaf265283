/**
 * What `npm run bench` reads from a server at the start and at the end of a measured window: the
 * CPU seconds of the server's processes on this machine (/proc, see proc-stat.ts) and the
 * server's own counters where they are exact and cheap to read:
 *
 * - Redis: INFO cpu (used_cpu_user + used_cpu_sys, the server's own getrusage, to the
 *   microsecond: a cross-check of /proc) and INFO stats' total_commands_processed;
 * - PostgreSQL: the WAL position (pg_current_wal_lsn: bytes of WAL written, cluster-wide), the
 *   next transaction id (pg_snapshot_xmax of the current snapshot: transactions that wrote,
 *   exactly, as each was given an id), and pg_stat_database's xact_commit and xact_rollback of the
 *   store's database (every transaction, reads too; but a backend publishes those counts at most
 *   once a second, and an idle one after 10 s, so they lag the window's edges a little);
 * - nats-server with a monitoring port (the private one): messages in and out (/varz);
 * - Kafka: nothing (its counters are JMX): the broker's CPU only.
 *
 * A PostgreSQL server's CPU is its whole process tree: the postmaster, every backend, the WAL
 * writer, the checkpointer, and backends that ended within the window (their time moves to the
 * postmaster's cutime/cstime).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { treeCpuSeconds } from './proc-stat.js';
import {
  serverWindow,
  type ServerKind,
  type ServerReading,
  type ServerRole,
  type ServerWindow,
} from './server-cost.js';

export type { ServerKind, ServerReading } from './server-cost.js';

export interface ServerProbe {
  readonly kind: ServerKind;
  readonly url: string;
  /** Started by the bench for this run: its load is the bench's alone. */
  readonly private: boolean;
  /** The server's (root) process on this machine, when found. */
  readonly pid: number | undefined;
  /** Why the server's CPU cannot be read (not on this machine, no process found), if so. */
  readonly unreadable: string | undefined;
  read(): Promise<ServerReading>;
  close(): Promise<void>;
}

interface ProbeBase {
  kind: ServerKind;
  url: string;
  private: boolean;
  pid: number | undefined;
  unreadable?: string;
}

async function cpuOf(pid: number | undefined): Promise<{ cpuSeconds: number; processes: number }> {
  if (pid === undefined) return { cpuSeconds: NaN, processes: 0 };
  const tree = await treeCpuSeconds(pid);
  return tree === undefined
    ? { cpuSeconds: NaN, processes: 0 }
    : { cpuSeconds: tree.seconds, processes: tree.processes };
}

/** Named fields (`name:value` lines) of a Redis INFO reply. */
export function parseRedisInfo(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (line.startsWith('#') || colon < 0) continue;
    fields[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return fields;
}

/** A redis-server: its process's CPU, INFO cpu and the commands it processed. */
export function redisServerProbe(base: Omit<ProbeBase, 'kind'>): ServerProbe {
  const redis = new Redis(base.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  let connected: Promise<void> | undefined;
  return {
    kind: 'redis',
    url: base.url,
    private: base.private,
    pid: base.pid,
    unreadable: base.unreadable,
    read: async () => {
      await (connected ??= redis.connect());
      const [info, cpu] = await Promise.all([
        redis.call('INFO', 'cpu', 'stats') as Promise<string>,
        cpuOf(base.pid),
      ]);
      const fields = parseRedisInfo(info);
      return {
        at: Date.now(),
        ...cpu,
        counters: {
          infoCpuSeconds: Number(fields.used_cpu_user) + Number(fields.used_cpu_sys),
          // This probe's own INFO of the previous reading is among them; server-cost.ts takes it out.
          commands: Number(fields.total_commands_processed),
        },
      };
    },
    close: async () => {
      redis.disconnect();
    },
  };
}

/** A nats-server: its process's CPU and, with a monitoring URL, the messages it moved. */
export function natsServerProbe(base: Omit<ProbeBase, 'kind'> & { monitorUrl?: string }): ServerProbe {
  return {
    kind: 'nats',
    url: base.url,
    private: base.private,
    pid: base.pid,
    unreadable: base.unreadable,
    read: async () => {
      const counters: Record<string, number> = {};
      const [cpu] = await Promise.all([
        cpuOf(base.pid),
        (async () => {
          if (base.monitorUrl === undefined) return;
          const varz = (await (await fetch(`${base.monitorUrl}/varz`)).json()) as Record<string, unknown>;
          counters.msgsIn = Number(varz.in_msgs ?? NaN);
          counters.msgsOut = Number(varz.out_msgs ?? NaN);
        })(),
      ]);
      return { at: Date.now(), ...cpu, counters };
    },
    close: () => Promise.resolve(),
  };
}

/** A Kafka broker: its (java) process's CPU. */
export function kafkaServerProbe(base: Omit<ProbeBase, 'kind'>): ServerProbe {
  return {
    kind: 'kafka',
    url: base.url,
    private: base.private,
    pid: base.pid,
    unreadable: base.unreadable,
    read: async () => ({ at: Date.now(), ...(await cpuOf(base.pid)), counters: {} }),
    close: () => Promise.resolve(),
  };
}

/** Bytes from WAL position 0/0 of a PostgreSQL LSN ('16/B374D848'). */
export function lsnBytes(lsn: string): number {
  const found = /^([0-9A-Fa-f]+)\/([0-9A-Fa-f]+)$/.exec(lsn.trim());
  if (!found) throw new Error(`not a PostgreSQL LSN: '${lsn}'`);
  return parseInt(found[1]!, 16) * 2 ** 32 + parseInt(found[2]!, 16);
}

/**
 * A PostgreSQL server: the CPU of the postmaster's process tree, the WAL written, transactions
 * given an id, and the store database's commits and rollbacks. `adminUrl` is where the probe
 * connects; `database` the store's.
 */
export function postgresServerProbe(
  base: Omit<ProbeBase, 'kind'> & { adminUrl: string; database: string },
): ServerProbe {
  const client = new pg.Client({ connectionString: base.adminUrl, application_name: 'baton-bench-probe' });
  client.on('error', () => undefined);
  let connected: Promise<void> | undefined;
  return {
    kind: 'postgres',
    url: base.url,
    private: base.private,
    pid: base.pid,
    unreadable: base.unreadable,
    read: async () => {
      await (connected ??= client.connect().then(() => undefined));
      // Read-only: the probe is given no transaction id of its own.
      const [{ rows }, cpu] = await Promise.all([
        client.query<{ lsn: string; xmax: string; commits: string | null; rollbacks: string | null }>(
          `SELECT pg_current_wal_lsn()::text AS lsn,
                  pg_snapshot_xmax(pg_current_snapshot())::text AS xmax,
                  d.xact_commit::text AS commits, d.xact_rollback::text AS rollbacks
             FROM (SELECT 1) one LEFT JOIN pg_stat_database d ON d.datname = $1`,
          [base.database],
        ),
        cpuOf(base.pid),
      ]);
      const row = rows[0]!;
      return {
        at: Date.now(),
        ...cpu,
        counters: {
          walBytes: lsnBytes(row.lsn),
          transactions: Number(row.xmax),
          commits: Number(row.commits ?? NaN),
          rollbacks: Number(row.rollbacks ?? NaN),
        },
      };
    },
    close: async () => {
      if (connected === undefined) return;
      await connected.catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}

/** A server of the measured system and what it is to it. */
export interface MeasuredServer {
  role: ServerRole;
  probe: ServerProbe;
}

/**
 * Readings of a system's servers around one measured window: `begin` just before the window
 * (after a background interval on each shared server, with the workers idle), `end` just after.
 */
export class ServerWindowMeter {
  private ends: ServerReading[] | undefined;

  private constructor(
    private readonly servers: readonly MeasuredServer[],
    private readonly starts: readonly ServerReading[],
    private readonly background: ReadonlyArray<{ before: ServerReading; after: ServerReading } | undefined>,
  ) {}

  /**
   * Reads every server. A shared one (another's load counts in its CPU) is read `backgroundMs`
   * earlier too, so the window reports the rate of its background beside the figure.
   */
  static async begin(servers: readonly MeasuredServer[], backgroundMs = 2_000): Promise<ServerWindowMeter> {
    const shared = servers.map((s) => !s.probe.private && s.probe.unreadable === undefined);
    let idle: Array<ServerReading | undefined> = servers.map(() => undefined);
    if (shared.some(Boolean) && backgroundMs > 0) {
      idle = await Promise.all(servers.map((s, i) => (shared[i] ? s.probe.read() : undefined)));
      await sleep(backgroundMs);
    }
    const starts = await Promise.all(servers.map((s) => s.probe.read()));
    return new ServerWindowMeter(
      servers,
      starts,
      idle.map((before, i) => (before === undefined ? undefined : { before, after: starts[i]! })),
    );
  }

  async end(): Promise<void> {
    this.ends = await Promise.all(this.servers.map((s) => s.probe.read()));
  }

  /** Each server's window, per durable step of `steps`. */
  windows(steps: number): ServerWindow[] {
    if (this.ends === undefined) throw new Error('ServerWindowMeter.windows before end()');
    return this.servers.map((s, i) =>
      serverWindow(
        {
          role: s.role,
          kind: s.probe.kind,
          private: s.probe.private,
          pid: s.probe.pid,
          unreadable: s.probe.unreadable,
        },
        this.starts[i]!,
        this.ends![i]!,
        steps,
        this.background[i],
      ),
    );
  }
}
