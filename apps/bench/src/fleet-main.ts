/**
 * `npm run bench:fleet -- [--workers 1,10,50] [--pairs nats+redis,nats+postgres,kafka+postgres]
 * [--idle-seconds 20] [--busy-seconds 20] [--kills 2]`: the background load a fleet of real worker
 * processes puts on the bus and the store, idle and busy, and its failover time, at each size
 * (workloads/fleet.ts). Prints a table and one JSON line per pair and size.
 *
 * Servers, so that the figures are the fleet's alone:
 * - Redis and NATS: private servers started here on free ports (redis-server without persistence,
 *   nats-server with JetStream and its monitoring port), stopped at the end;
 * - Postgres: a private server too (initdb in a temporary directory, run as the postgres user
 *   when the bench runs as root), with max_connections 1000: every worker holds a presence
 *   session and its pool's connections, and 50 workers need more than a default server's 100.
 *   The store's database is `fleet` (its backends' CPU and pg_stat_database counters are the
 *   store's figures); the crash ledger lives in the server's `postgres` database, apart;
 * - Kafka: the shared broker (BATON_TEST_KAFKA_URL); its whole process's CPU is read, so other
 *   users of that broker count too (a window with no worker is read first, as the baseline).
 * Worker processes run the built JavaScript (BATON_WORKER_RUNTIME=dist unless set; `npm run
 * build` first), as the image does. Every process started here is stopped on exit, error or Ctrl-C.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  kafkaTestUrl,
  postgresTestUrl,
  startPrivateNats,
  startPrivateRedis,
  freePort,
  type PrivateServer,
} from '@baton/testing/servers';
import { benchEnvironmentFactory } from './environment.js';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';
import { parseCommandArgs, runCommand, stopOnSignal, UsageError, wholeNumber } from './command.js';
import {
  difference,
  listenerPid,
  natsProbe,
  postgresProbe,
  processProbe,
  redisProbe,
  type Probe,
  type WindowLoad,
} from './fleet-probes.js';
import {
  killEveryWorkerNow,
  measureFleet,
  type FleetFigures,
  type FleetPairSetup,
} from './workloads/fleet.js';

const USAGE = `Usage: npm run bench:fleet -- [options]

  --workers LIST       fleet sizes, comma-separated (default 1,10,50)
  --pairs LIST         adapter pairs (default nats+redis,nats+postgres,kafka+postgres)
  --idle-seconds N     length of the idle window (default 20)
  --busy-seconds N     length of the busy window (default 20)
  --busy-runs N        unfinished runs kept during the busy window (default 20)
  --kills N            SIGKILLs of a busy worker per size, for the failover time (default 2)
  --start-batch N      workers started at once while a fleet boots (default 2)
  --help               this text

Servers: private redis-server, nats-server and PostgreSQL (BATON_PG_BIN, default
/usr/lib/postgresql/15/bin); the shared Kafka broker (BATON_TEST_KAFKA_URL).`;

const PAIRS = ['nats+redis', 'nats+postgres', 'kafka+postgres', 'kafka+redis'] as const;
type Pair = (typeof PAIRS)[number];

interface Config {
  workers: number[];
  pairs: Pair[];
  idleSeconds: number;
  busySeconds: number;
  busyRuns: number;
  kills: number;
  startBatch: number;
}

function list(flag: string, value: string | undefined, fallback: string): string[] {
  const items = (value ?? fallback).split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw new UsageError(`${flag} is '${value}'; give a comma-separated list`);
  return items;
}

function parse(argv: string[]): Config | undefined {
  const { values } = parseCommandArgs(argv, USAGE, {
    workers: { type: 'string' },
    pairs: { type: 'string' },
    'idle-seconds': { type: 'string' },
    'busy-seconds': { type: 'string' },
    'busy-runs': { type: 'string' },
    kills: { type: 'string' },
    'start-batch': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return undefined;
  const pairs = list('--pairs', values.pairs, 'nats+redis,nats+postgres,kafka+postgres').map((p) => {
    if (!(PAIRS as readonly string[]).includes(p))
      throw new UsageError(`--pairs names '${p}'; use ${PAIRS.join(', ')}`);
    return p as Pair;
  });
  const number = (flag: string, value: string | undefined, fallback: number): number =>
    value === undefined ? fallback : wholeNumber(flag, value);
  return {
    workers: list('--workers', values.workers, '1,10,50').map((w) => wholeNumber('--workers', w)),
    pairs,
    idleSeconds: number('--idle-seconds', values['idle-seconds'], 20),
    busySeconds: number('--busy-seconds', values['busy-seconds'], 20),
    busyRuns: number('--busy-runs', values['busy-runs'], 20),
    kills: number('--kills', values.kills, 2),
    startBatch: number('--start-batch', values['start-batch'], 2),
  };
}

/** What is started for the whole bench and stopped at its end. */
class Servers {
  redis: PrivateServer | undefined;
  nats: { server: PrivateServer; monitorUrl: string } | undefined;
  postgres: PrivatePostgres | undefined;

  async startRedis(): Promise<PrivateServer> {
    // No persistence: the figures are the fleet's commands, not the disk's.
    this.redis ??= await startPrivateRedis(['--appendonly', 'no', '--maxclients', '10000']);
    return this.redis;
  }

  async startNats(): Promise<{ server: PrivateServer; monitorUrl: string }> {
    if (this.nats === undefined) {
      const monitorPort = await freePort();
      const server = await startPrivateNats(['-m', String(monitorPort)]);
      this.nats = { server, monitorUrl: `http://127.0.0.1:${monitorPort}` };
    }
    return this.nats;
  }

  /** A private Postgres server; the URL of its `fleet` database (the store's). */
  async startPostgres(): Promise<PrivatePostgres> {
    this.postgres ??= await startPrivatePostgres();
    return this.postgres;
  }

  async stop(): Promise<void> {
    await Promise.allSettled([this.redis?.dispose(), this.nats?.server.dispose(), this.postgres?.stop()]);
    this.redis = undefined;
    this.nats = undefined;
    this.postgres = undefined;
  }

  /** Synchronous last resort (process exit): the private servers get SIGKILL. */
  killNow(): void {
    for (const pid of [this.redis?.pid(), this.nats?.server.pid(), this.postgres?.pid()]) {
      if (pid !== undefined) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
  }
}

async function setUpPair(pair: Pair, servers: Servers): Promise<FleetPairSetup> {
  const [bus, storeKind] = pair.split('+') as ['nats' | 'kafka', 'redis' | 'postgres'];
  let storeProbe: Probe;
  let storeUrl: string;
  // The ledger's connections (one pool per worker) stay off the shared server when there is a private one.
  let ledgerUrl = postgresTestUrl();
  if (storeKind === 'redis') {
    const redis = await servers.startRedis();
    storeUrl = redis.url;
    storeProbe = redisProbe(redis.url, redis.pid()!);
  } else {
    const postgres = await servers.startPostgres();
    storeUrl = postgres.storeUrl;
    storeProbe = postgresProbe(postgres.adminUrl, postgres.storeDatabase);
    ledgerUrl = postgres.adminUrl;
  }
  let busProbe: Probe;
  let transportUrl: string;
  if (bus === 'nats') {
    const nats = await servers.startNats();
    transportUrl = nats.server.url;
    busProbe = natsProbe(nats.monitorUrl, nats.server.pid()!);
  } else {
    transportUrl = kafkaTestUrl();
    const port = Number(new URL(transportUrl.replace(/^kafka:/, 'http:')).port || 9092);
    const pid = await listenerPid(port);
    if (pid === undefined) throw new Error(`no process listens on Kafka's port ${port} of this host`);
    busProbe = processProbe(() => [pid]);
  }
  const urls = { natsUrl: transportUrl, kafkaUrl: transportUrl, redisUrl: storeUrl, postgresUrl: storeUrl };
  return {
    pair,
    factory: benchEnvironmentFactory(bus, storeKind, urls),
    storeProbe,
    busProbe,
    ledgerUrl,
    partitioned: bus === 'kafka',
  };
}

/** Load of the bus and the store with no worker at all: the floor under every figure. */
async function baseline(
  setup: FleetPairSetup,
  seconds: number,
): Promise<{ store: WindowLoad; bus: WindowLoad }> {
  const [s0, b0] = await Promise.all([setup.storeProbe.read(), setup.busProbe.read()]);
  await sleep(seconds * 1000);
  const [s1, b1] = await Promise.all([setup.storeProbe.read(), setup.busProbe.read()]);
  return { store: difference(s0, s1), bus: difference(b0, b1) };
}

const pct = (load: WindowLoad): number => (100 * load.cpuSeconds) / load.seconds;
const total = (load: WindowLoad): number => Object.values(load.rates).reduce((a, b) => a + b, 0);
/** Requests the store served per second: Redis commands, Postgres transactions. */
const storeRequests = (load: WindowLoad): number =>
  'xact_commit' in load.rates || 'xact_rollback' in load.rates
    ? (load.rates.xact_commit ?? 0) + (load.rates.xact_rollback ?? 0)
    : total(load);
const fixed = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** The busiest request kinds of a window, as `kind rate/s` pairs. */
function topRates(load: WindowLoad, count = 4): string {
  return Object.entries(load.rates)
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([kind, rate]) => `${kind} ${fixed(rate, 0)}`)
    .join(', ');
}

function tableRows(f: FleetFigures, base: { store: WindowLoad; bus: WindowLoad }): string[] {
  const row = (window: 'idle' | 'busy'): string => {
    const w = f[window];
    const storeReqs = storeRequests(w.store);
    return [
      f.pair.padEnd(15),
      String(f.workers).padStart(4),
      window.padEnd(5),
      fixed(pct(w.store)).padStart(7),
      fixed(storeReqs, 0).padStart(8),
      fixed(storeReqs / f.workers).padStart(8),
      fixed(pct(w.bus) - pct(base.bus)).padStart(7),
      fixed(total(w.bus), 0).padStart(8),
      fixed(pct(w.workers) / f.workers, 2).padStart(7),
      fixed(w.store.gauges.backends ?? w.store.gauges.clients ?? NaN, 0).padStart(5),
      window === 'busy'
        ? `${fixed(f.failoverMs.p50, 0)}/${fixed(f.failoverMs.max, 0)}`.padStart(9)
        : ''.padStart(9),
      `  ${topRates(w.store)}`,
    ].join(' ');
  };
  return [row('idle'), row('busy')];
}

const HEADER = [
  'pair'.padEnd(15),
  '   N',
  'win  ',
  'store%'.padStart(7),
  'st req/s'.padStart(8),
  'req/s/w'.padStart(8),
  'bus%'.padStart(7),
  'bus r/s'.padStart(8),
  'cpu%/w'.padStart(7),
  'conns'.padStart(5),
  'fo p50/mx'.padStart(9),
  '  store requests/s by kind',
].join(' ');

await runCommand(USAGE, parse, async (config) => {
  process.env.BATON_WORKER_RUNTIME ??= 'dist';
  const servers = new Servers();
  // Ctrl-C and kill: the workers get SIGTERM through the world's dispose, the servers are stopped.
  stopOnSignal('the fleet and the servers', () => {
    killEveryWorkerNow();
    return servers.stop();
  });
  process.on('exit', () => {
    killEveryWorkerNow();
    servers.killNow();
  });
  const results: string[] = [];
  try {
    console.log(
      `bench:fleet: workers ${config.workers.join(',')}, pairs ${config.pairs.join(',')}, ` +
        `idle ${config.idleSeconds} s, busy ${config.busySeconds} s (${config.busyRuns} runs), node ${process.version}`,
    );
    for (const pair of config.pairs) {
      const setup = await setUpPair(pair, servers);
      try {
        const base = await baseline(setup, 5);
        console.log(
          `${pair}: baseline with no worker: store ${fixed(pct(base.store))}% of a core, bus ${fixed(pct(base.bus))}%`,
        );
        for (const workers of config.workers) {
          const figures = await measureFleet(setup, {
            workers,
            idleSeconds: config.idleSeconds,
            busySeconds: config.busySeconds,
            busyRuns: config.busyRuns,
            kills: config.kills,
            startBatch: config.startBatch,
            log: (line) => console.log(line),
          });
          const rows = tableRows(figures, base);
          results.push(...rows);
          console.log([HEADER, ...rows].join('\n'));
          console.log(JSON.stringify({ bench: 'fleet', ...figures, baseline: base }));
        }
      } finally {
        await Promise.allSettled([setup.storeProbe.close(), setup.busProbe.close()]);
      }
    }
    console.log(
      [
        '',
        'store% / bus%: CPU of the store / bus server in % of one core (bus% less the no-worker baseline);',
        'st req/s: requests the store counted per second (Redis commands, Postgres transactions and tuples',
        'are listed by kind; Postgres st req/s counts transactions only); req/s/w: per worker;',
        'cpu%/w: CPU of one worker process in % of a core; conns: store connections (Redis clients,',
        "Postgres backends of the store's database) at the window's end; fo: SIGKILL to the next step",
        'elsewhere, p50/max in ms (one worker: the replacement resumes the runs, so it includes its start).',
        HEADER,
        ...results,
      ].join('\n'),
    );
  } finally {
    await servers.stop();
  }
});
