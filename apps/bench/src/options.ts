/**
 * `npm run bench -- [options]`: every option, its default, and a clear error for a bad one.
 */
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { parseCommandArgs, UsageError, wholeNumber } from './command.js';
import type { BenchConfig, BusKind, Pair, StoreKind, WorkloadName } from './types.js';

export const WORKLOADS: readonly WorkloadName[] = ['chain10', 'fanout', 'payload', 'recovery'];

/** `--pairs all`: every bus/store pair Baton supports, the Redis bus last. */
export const ALL_PAIRS: readonly Pair[] = [
  { transport: 'nats', store: 'redis' },
  { transport: 'nats', store: 'postgres' },
  { transport: 'kafka', store: 'redis' },
  { transport: 'kafka', store: 'postgres' },
  { transport: 'redis', store: 'redis' },
];
const BUSES = ['nats', 'kafka', 'redis'] as const;
const STORES = ['redis', 'postgres'] as const;

export const USAGE = `Usage: npm run bench -- [options]

  --transport nats|kafka|redis  bus of the Baton workers (default nats)
  --store redis|postgres        store of the Baton workers (default redis)
  --pairs all|BUS+STORE,...     several bus/store pairs in one run, one after the other on the
                                same servers (all: nats+redis, nats+postgres, kafka+redis,
                                kafka+postgres, redis+redis); instead of --transport/--store
  --workloads a,b,...           of ${WORKLOADS.join(', ')} (default all)
  --runs N                      runs per throughput workload (default 1000)
  --concurrency N               BATON_CONCURRENCY of each worker process (default 1000)
  --workers N                   worker processes for the throughput workloads (default 1)
  --single-runs N               runs executed one at a time for the one-run latency (default 30)
  --kills N                     SIGKILLs, and SIGTERMs, in the recovery workload (default 10)
  --replacement-delay-ms N      recovery: spawn a SIGKILLed worker's replacement N ms after the
                                kill (default 0: at once, its start-up sharing the cores with
                                the failover, as on a crowded node)
  --runtime dist|source         worker processes on the built JavaScript, as deployed (default
                                dist; the bench runs the cached Nx build first), or on the
                                TypeScript sources through tsx
  --pipeline-steps              workers with BATON_PIPELINE_STEPS=true (opt-in pipelined steps)
  --encrypt                     workers and the client with a fresh BATON_ENCRYPTION_KEYS: journal,
                                checkpoints, inputs, results and signals encrypted (docs/integrity.md)
  --no-baselines                skip BullMQ and the service floors
  --servers auto|private|shared where the bus and the store run (default auto): auto starts a
                                private redis-server, nats-server and PostgreSQL for the run
                                wherever their binaries are here (else uses the shared one);
                                private insists; shared uses the BATON_TEST_* servers. Kafka is
                                always the shared broker. Servers' CPU per step is read from /proc
                                either way; a shared server's includes everyone else's load
  --out FILE                    JSON report (default .tmp/bench/bench-<time>.json)
  --smoke                       tiny sizes, to prove the bench works (CI): 20 runs, concurrency
                                100, 1 kill, unless given; its figures mean nothing (too few
                                samples, start-up included): never compare or publish them
  --help                        this text

Shared servers: BATON_TEST_NATS_URL, BATON_TEST_REDIS_URL, BATON_TEST_POSTGRES_URL,
BATON_TEST_KAFKA_URL (the same variables and defaults as the tests). Private ones: redis-server and
nats-server on PATH (or BATON_REDIS_SERVER_BIN, BATON_NATS_SERVER_BIN), PostgreSQL's initdb and
pg_ctl in BATON_PG_BIN (default /usr/lib/postgresql/15/bin).`;

export { UsageError } from './command.js';

export function parseOptions(argv: readonly string[], now = new Date()): BenchConfig | 'help' {
  const { values } = parseCommandArgs(argv, USAGE, {
    transport: { type: 'string' },
    store: { type: 'string' },
    pairs: { type: 'string' },
    workloads: { type: 'string' },
    runs: { type: 'string' },
    concurrency: { type: 'string' },
    workers: { type: 'string' },
    'single-runs': { type: 'string' },
    kills: { type: 'string' },
    'replacement-delay-ms': { type: 'string' },
    runtime: { type: 'string' },
    'pipeline-steps': { type: 'boolean' },
    encrypt: { type: 'boolean' },
    'no-baselines': { type: 'boolean' },
    servers: { type: 'string' },
    out: { type: 'string' },
    smoke: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return 'help';
  // --smoke only changes the defaults: a size given explicitly wins, in any order.
  const smoke = values.smoke === true;
  const count = (flag: string, raw: string | undefined, fallback: number): number =>
    raw === undefined ? fallback : wholeNumber(`--${flag}`, raw);
  if (values.pairs !== undefined && (values.transport !== undefined || values.store !== undefined))
    throw new UsageError('--pairs names the buses and stores: leave --transport and --store out');
  const pairs =
    values.pairs === undefined
      ? [
          {
            transport: oneOf('transport', values.transport, BUSES, 'nats') as BusKind,
            store: oneOf('store', values.store, STORES, 'redis') as StoreKind,
          },
        ]
      : pairList(values.pairs);
  return {
    transport: pairs[0]!.transport,
    store: pairs[0]!.store,
    pairs,
    runs: count('runs', values.runs, smoke ? 20 : 1000),
    concurrency: count('concurrency', values.concurrency, smoke ? 100 : 1000),
    workers: count('workers', values.workers, 1),
    workloads: workloadList(values.workloads),
    kills: count('kills', values.kills, smoke ? 1 : 10),
    replacementDelayMs: count('replacement-delay-ms', values['replacement-delay-ms'], 0),
    singleRuns: count('single-runs', values['single-runs'], 30),
    baselines: values['no-baselines'] !== true,
    runtime: oneOf('runtime', values.runtime, ['dist', 'source'] as const, 'dist'),
    pipelineSteps: values['pipeline-steps'] === true,
    encrypt: values.encrypt === true,
    servers: oneOf('servers', values.servers, ['auto', 'private', 'shared'] as const, 'auto'),
    smoke,
    out: values.out ?? `.tmp/bench/bench-${now.toISOString().replace(/[:.]/g, '-')}.json`,
    natsUrl: natsTestUrl(),
    redisUrl: redisTestUrl(),
    postgresUrl: postgresTestUrl(),
    kafkaUrl: kafkaTestUrl(),
  };
}

function oneOf<T extends string>(
  flag: string,
  raw: string | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new UsageError(
      `--${flag} is '${raw}'; use ${[allowed.slice(0, -1).join(', '), allowed.at(-1)].filter(Boolean).join(' or ')}`,
    );
  }
  return raw as T;
}

function workloadList(raw: string | undefined): WorkloadName[] {
  if (raw === undefined) return [...WORKLOADS];
  const list = raw
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);
  const unknown = list.filter((w) => !WORKLOADS.includes(w as WorkloadName));
  if (unknown.length > 0 || list.length === 0) {
    throw new UsageError(
      `--workloads has '${unknown.join(',') || '(nothing)'}'; choose from ${WORKLOADS.join(', ')}`,
    );
  }
  return list as WorkloadName[];
}

function pairList(raw: string): Pair[] {
  if (raw.trim() === 'all') return ALL_PAIRS.map((p) => ({ ...p }));
  const names = raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (names.length === 0) throw new UsageError(`--pairs is '${raw}'; give all or BUS+STORE,...`);
  const pairs = names.map((name): Pair => {
    const [bus, store, extra] = name.split('+');
    if (
      extra !== undefined ||
      !(BUSES as readonly string[]).includes(bus ?? '') ||
      !(STORES as readonly string[]).includes(store ?? '')
    ) {
      throw new UsageError(
        `--pairs names '${name}'; a pair is BUS+STORE with BUS ${BUSES.join('|')} and STORE ${STORES.join('|')}`,
      );
    }
    return { transport: bus as BusKind, store: store as StoreKind };
  });
  const seen = new Set<string>();
  for (const p of pairs) {
    const key = `${p.transport}+${p.store}`;
    if (seen.has(key)) throw new UsageError(`--pairs names ${key} twice`);
    seen.add(key);
  }
  return pairs;
}
