/**
 * The servers `npm run bench` measures on, and the probes that read their CPU.
 *
 * `--servers auto` (the default) starts a private redis-server, nats-server and PostgreSQL for the
 * run wherever their binaries are on this machine, so that no one else's load lands in the
 * servers' CPU per step: a redis-server without persistence (as the shared test server runs), a
 * nats-server with JetStream on file storage and a monitoring port, and a PostgreSQL cluster
 * (initdb in a temporary directory, about a second; see private-postgres.ts) with durable
 * commits. A server whose binary is missing, or that fails to start, falls back to the shared
 * one, and the report says which. `--servers private` insists (a missing binary fails the bench);
 * `--servers shared` uses the BATON_TEST_* servers throughout. Kafka is always the shared broker:
 * a private JVM broker would take longer to start than most runs last. A shared server's CPU is
 * read too, from its process on this machine (found by its listening port), and it includes
 * whatever else uses it.
 */
import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { freePort, startPrivateNats, startPrivateRedis, type PrivateServer } from '@baton/testing/servers';
import type { BenchUrls } from './environment.js';
import {
  privatePostgresUnavailable,
  startPrivatePostgres,
  type PrivatePostgres,
} from './private-postgres.js';
import { listenerPid } from './proc-stat.js';
import {
  kafkaServerProbe,
  natsServerProbe,
  postgresServerProbe,
  redisServerProbe,
  type MeasuredServer,
  type ServerKind,
  type ServerProbe,
} from './server-probes.js';
import type { BenchServerInfo, BusKind, ServerMode, StoreKind } from './types.js';

/** Where `name` is executable: a path as given, else the first match on PATH. */
export async function findExecutable(name: string): Promise<string | undefined> {
  const candidates = name.includes('/')
    ? [name]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** The port of a server URL (kafka://, redis://, nats://, postgres://), with the scheme's default. */
function portOf(url: string, fallback: number): number {
  const parsed = new URL(url.replace(/^[a-z]+:/, 'http:'));
  return parsed.port === '' ? fallback : Number(parsed.port);
}

const DEFAULT_PORTS: Record<ServerKind, number> = { redis: 6379, nats: 4222, postgres: 5432, kafka: 9092 };

/** A shared server's process on this machine, by the port it listens on. */
async function sharedPid(kind: ServerKind, url: string): Promise<{ pid?: number; unreadable?: string }> {
  const host = new URL(url.replace(/^[a-z]+:/, 'http:')).hostname;
  if (!LOOPBACK.has(host)) return { unreadable: `${host} is not this machine: its CPU cannot be read` };
  const port = portOf(url, DEFAULT_PORTS[kind]);
  const pid = await listenerPid(port);
  if (pid === undefined)
    return { unreadable: `no process of this machine (visible to the bench) listens on port ${port}` };
  return { pid };
}

/** The servers of one bench run. */
export class BenchServers {
  private readonly probes = new Map<ServerKind, ServerProbe>();
  readonly info: BenchServerInfo[] = [];
  private redis: PrivateServer | undefined;
  private nats: PrivateServer | undefined;
  private postgres: PrivatePostgres | undefined;

  private constructor(readonly urls: BenchUrls) {}

  /**
   * Starts (or finds) the servers of `kinds` in `mode`; `shared` are the BATON_TEST_* URLs,
   * which kinds not listed keep.
   */
  static async start(options: {
    mode: ServerMode;
    kinds: readonly ServerKind[];
    shared: BenchUrls;
    log: (line: string) => void;
  }): Promise<BenchServers> {
    const servers = new BenchServers({ ...options.shared });
    try {
      for (const kind of new Set(options.kinds)) await servers.add(kind, options.mode, options.log);
    } catch (err) {
      await servers.stop();
      throw err;
    }
    return servers;
  }

  private async add(kind: ServerKind, mode: ServerMode, log: (line: string) => void): Promise<void> {
    let reason: string | undefined = mode === 'shared' ? '--servers shared' : undefined;
    if (kind === 'kafka')
      reason = 'Kafka is always the shared broker (a private JVM broker is too slow to start)';
    if (reason === undefined) {
      const missing = await this.privateUnavailable(kind);
      if (missing !== undefined) {
        if (mode === 'private') throw new Error(`--servers private: no private ${kind} server: ${missing}`);
        reason = `no private server: ${missing}`;
      } else {
        try {
          await this.startPrivate(kind);
          return;
        } catch (err) {
          if (mode === 'private') throw err;
          reason = `the private server failed to start (${(err as Error).message.split('\n')[0]})`;
        }
      }
    }
    await this.addShared(kind, reason);
    log(`${kind}: the shared server ${this.info.at(-1)!.url}: ${reason}`);
  }

  private async privateUnavailable(kind: ServerKind): Promise<string | undefined> {
    const binary = (env: string, name: string): Promise<string | undefined> =>
      findExecutable(process.env[env] || name).then((found) =>
        found === undefined
          ? `${process.env[env] || name} is not installed (or ${env} names none)`
          : undefined,
      );
    if (kind === 'redis') return binary('BATON_REDIS_SERVER_BIN', 'redis-server');
    if (kind === 'nats') return binary('BATON_NATS_SERVER_BIN', 'nats-server');
    if (kind === 'postgres') return privatePostgresUnavailable();
    return 'not available';
  }

  private async startPrivate(kind: ServerKind): Promise<void> {
    if (kind === 'redis') {
      // No persistence, as the shared test server runs: the figures are the commands' cost.
      const redis = (this.redis = await startPrivateRedis(['--appendonly', 'no']));
      this.urls.redisUrl = redis.url;
      this.register(
        redisServerProbe({ url: redis.url, private: true, pid: redis.pid() }),
        'private redis-server',
      );
    } else if (kind === 'nats') {
      const monitorPort = await freePort();
      const nats = (this.nats = await startPrivateNats(['-m', String(monitorPort)]));
      this.urls.natsUrl = nats.url;
      this.register(
        natsServerProbe({
          url: nats.url,
          private: true,
          pid: nats.pid(),
          monitorUrl: `http://127.0.0.1:${monitorPort}`,
        }),
        'private nats-server (JetStream, file storage)',
      );
    } else if (kind === 'postgres') {
      const postgres = (this.postgres = await startPrivatePostgres({ database: 'bench', label: 'bench' }));
      this.urls.postgresUrl = postgres.storeUrl;
      this.register(
        postgresServerProbe({
          url: postgres.storeUrl,
          private: true,
          pid: postgres.pid(),
          adminUrl: postgres.adminUrl,
          database: postgres.storeDatabase,
        }),
        'private PostgreSQL cluster (synchronous_commit on)',
      );
    }
  }

  private async addShared(kind: ServerKind, reason: string): Promise<void> {
    const url =
      kind === 'redis'
        ? this.urls.redisUrl
        : kind === 'nats'
          ? this.urls.natsUrl
          : kind === 'postgres'
            ? this.urls.postgresUrl
            : this.urls.kafkaUrl;
    const found = await sharedPid(kind, url);
    const base = { url, private: false, pid: found.pid, unreadable: found.unreadable };
    const probe =
      kind === 'redis'
        ? redisServerProbe(base)
        : kind === 'nats'
          ? natsServerProbe(base)
          : kind === 'postgres'
            ? postgresServerProbe({
                ...base,
                adminUrl: url,
                database: new URL(url).pathname.replace(/^\//, '') || 'postgres',
              })
            : kafkaServerProbe(base);
    this.register(
      probe,
      `shared: ${reason}${found.unreadable ? `; CPU unreadable: ${found.unreadable}` : ''}`,
    );
  }

  private register(probe: ServerProbe, note: string): void {
    this.probes.set(probe.kind, probe);
    this.info.push({
      kind: probe.kind,
      url: probe.url,
      private: probe.private,
      pid: probe.pid ?? null,
      note,
    });
  }

  /** The probe of a server of this run; undefined when it was not asked for. */
  probe(kind: ServerKind): ServerProbe | undefined {
    return this.probes.get(kind);
  }

  /** The bus and store of a pair, with their roles (one `bus+store` when they are one server). */
  measured(bus: BusKind, store: StoreKind): MeasuredServer[] {
    const busProbe = this.probe(bus);
    const storeProbe = this.probe(store);
    if (busProbe !== undefined && busProbe === storeProbe) return [{ role: 'bus+store', probe: busProbe }];
    const list: MeasuredServer[] = [];
    if (busProbe) list.push({ role: 'bus', probe: busProbe });
    if (storeProbe) list.push({ role: 'store', probe: storeProbe });
    return list;
  }

  private stopping: Promise<void> | undefined;

  /**
   * Closes the probes and stops the private servers, removing their directories. Called again
   * while that is under way (Ctrl-C, then the run failing because its servers went), it waits for
   * the same stop, so the process does not exit halfway.
   */
  stop(): Promise<void> {
    return (this.stopping ??= (async () => {
      await Promise.allSettled([...this.probes.values()].map((p) => p.close()));
      this.probes.clear();
      await Promise.allSettled([this.redis?.dispose(), this.nats?.dispose(), this.postgres?.stop()]);
      this.redis = this.nats = undefined;
      this.postgres = undefined;
    })());
  }

  /** Synchronous last resort (process exit): the private servers get SIGKILL. */
  killNow(): void {
    for (const pid of [this.redis?.pid(), this.nats?.pid(), this.postgres?.pid()]) {
      if (pid === undefined) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}
