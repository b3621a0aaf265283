/**
 * What `bench:fleet` reads from the servers a fleet talks to, once at the start and once at the
 * end of a window: CPU seconds from /proc (the server's own process, or the Postgres backends
 * serving the fleet's database) and the requests the server counts by kind (Redis INFO
 * commandstats, nats-server's /varz and /jsz, Postgres' pg_stat_database). The difference of two
 * readings is the window's load. Kafka counts nothing cheaply (its counters are JMX), so on Kafka
 * only the broker's CPU is read.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { cpuSeconds } from './proc-stat.js';

export { cpuSeconds, listenerPid } from './proc-stat.js';

/** One reading: CPU seconds by process, and counters by name. */
export interface Reading {
  at: number;
  cpu: Map<number, number>;
  counters: Record<string, number>;
  /** Levels, not counters (connections): the window reports the end's. */
  gauges?: Record<string, number>;
}

/** The load between two readings. */
export interface WindowLoad {
  seconds: number;
  /** CPU seconds of the processes read at the end (a process new since the start counts whole). */
  cpuSeconds: number;
  /** Counter increments per second, by name. */
  rates: Record<string, number>;
  /** Levels at the window's end (connections). */
  gauges: Record<string, number>;
}

export function difference(start: Reading, end: Reading): WindowLoad {
  let cpu = 0;
  for (const [pid, seconds] of end.cpu) cpu += seconds - (start.cpu.get(pid) ?? 0);
  const windowS = (end.at - start.at) / 1000;
  const rates: Record<string, number> = {};
  for (const [name, value] of Object.entries(end.counters)) {
    const delta = value - (start.counters[name] ?? 0);
    if (delta > 0) rates[name] = delta / windowS;
  }
  return { seconds: windowS, cpuSeconds: cpu, rates, gauges: end.gauges ?? {} };
}

/** Reads one server (or a set of processes) for a window. */
export interface Probe {
  read(): Promise<Reading>;
  close(): Promise<void>;
}

async function cpuOf(pids: readonly number[]): Promise<Map<number, number>> {
  const cpu = new Map<number, number>();
  await Promise.all(
    pids.map(async (pid) => {
      const seconds = await cpuSeconds(pid);
      if (seconds !== undefined) cpu.set(pid, seconds);
    }),
  );
  return cpu;
}

/** Processes by pid, no counters (worker processes, a Kafka broker). */
export function processProbe(pids: () => readonly number[]): Probe {
  return {
    read: async () => ({ at: Date.now(), cpu: await cpuOf(pids()), counters: {} }),
    close: () => Promise.resolve(),
  };
}

/** A redis-server: its CPU and INFO commandstats (calls per command). */
export function redisProbe(url: string, pid: number): Probe {
  const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  return {
    read: async () => {
      const [info, clients, cpu] = await Promise.all([
        redis.info('commandstats'),
        redis.info('clients'),
        cpuOf([pid]),
      ]);
      const connected = /connected_clients:(\d+)/.exec(clients)?.[1];
      const counters: Record<string, number> = {};
      for (const line of info.split('\n')) {
        const found = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
        // The probe's own INFO calls are left out.
        if (found && found[1] !== 'info') counters[found[1]!] = Number(found[2]);
      }
      return { at: Date.now(), cpu, counters, gauges: { clients: Number(connected ?? NaN) } };
    },
    close: async () => {
      redis.disconnect();
    },
  };
}

/** A nats-server with its monitoring port: CPU, messages in and out, JetStream API requests. */
export function natsProbe(monitorUrl: string, pid: number): Probe {
  const json = async (path: string): Promise<Record<string, unknown>> =>
    (await (await fetch(`${monitorUrl}${path}`)).json()) as Record<string, unknown>;
  return {
    read: async () => {
      const [varz, jsz, cpu] = await Promise.all([json('/varz'), json('/jsz'), cpuOf([pid])]);
      const api = (jsz.api ?? {}) as { total?: number };
      return {
        at: Date.now(),
        cpu,
        counters: {
          msgs_in: Number(varz.in_msgs ?? 0),
          msgs_out: Number(varz.out_msgs ?? 0),
          js_api: Number(api.total ?? 0),
        },
      };
    },
    close: () => Promise.resolve(),
  };
}

/**
 * The Postgres backends connected to one database (the fleet's own, created for the bench): their
 * CPU, and the database's transaction and tuple counters. A backend that ended within the window
 * loses its CPU from the figure (pools keep theirs open, so this is rare).
 */
export function postgresProbe(adminUrl: string, database: string): Probe {
  const client = new pg.Client({ connectionString: adminUrl, application_name: 'baton-bench-fleet-probe' });
  const connected = client.connect();
  return {
    read: async () => {
      await connected;
      const backends = await client.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      );
      const stats = await client.query<Record<string, string>>(
        `SELECT xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted
           FROM pg_stat_database WHERE datname = $1`,
        [database],
      );
      const counters: Record<string, number> = {};
      for (const [name, value] of Object.entries(stats.rows[0] ?? {})) counters[name] = Number(value);
      return {
        at: Date.now(),
        cpu: await cpuOf(backends.rows.map((r) => r.pid)),
        counters,
        gauges: { backends: backends.rows.length },
      };
    },
    close: async () => {
      await connected.catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}
