/**
 * `npm run bench:queries -- [options]`: run queries with a million runs in the store. Seeds N runs
 * (a mix of statuses, 20 workflows, 3 versions, 10 workers holding the running ones, half with an
 * idempotency key) into a Redis store and a Postgres store of their own, then times, per store, the
 * first page unfiltered, by status, by workflow and status, by a created-at range, by a run-id
 * prefix, by worker, the second page through a cursor, and runs.count: p50 and p95 over `--samples`
 * calls each, with how many runs the page held (a Redis page can come back short when its scan
 * budget runs out; the time to a full page is then timed too). Prints the store's memory for the
 * data set (Redis: used_memory and the index keys; Postgres: table and index sizes).
 *
 * How runs get in (docs/performance.md, "Run queries at a million runs"):
 * - Redis: the store's own calls (runs.create, runs.createAndLease, leases.suspend, runs.finish with a final
 *   checkpoint), many in flight on one connection, so every key and index entry is what the
 *   scripts write; createdAt is therefore the seeding time (spread over the seeding minutes).
 * - Postgres: the store's migrations create the schema, then `INSERT … SELECT generate_series`
 *   writes the runs (createdAt spread over 30 days) and their leases in batches; the run_counts
 *   triggers of migration 011 run as for any insert, and the indexes are the migrations'. No
 *   checkpoint rows (no query reads them); ANALYZE after seeding, as autovacuum would.
 *
 * A benchmark, not a test: it asserts nothing about timings. Its Redis key prefix and Postgres
 * schema are its own and are removed at the end unless `--keep`.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Checkpoint, RunOutcome, RunQuery, RunStatus, Store } from '@baton/core/adapter';
import { postgresStore } from '@baton/store-postgres';
import { redisStore } from '@baton/store-redis';
import { postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { parseCommandArgs, runCommand, UsageError, wholeNumber } from './command.js';
import {
  attributesOf,
  compareGin,
  measureAttributes,
  PG_ATTRIBUTES_SQL,
  seedPostgresAttributes,
} from './queries-attributes.js';

/** When seeding began: the search attributes' times are drawn back from it. */
const SEEDED_AT = Date.now();

const USAGE = `Usage: npm run bench:queries -- [options]

  --runs N               runs seeded into each store (default 1000000)
  --stores a,b           redis, postgres or both (default redis,postgres)
  --samples N            timed calls per query (default 50, after 5 untimed)
  --workers N            workers holding the running runs (5% of them; default 50, so 1,000
                         held leases each at a million runs, a worker's default concurrency)
  --keep                 keep the seeded data (prints the key prefix and schema)
  --compare-gin          Postgres: also time the attribute filters over a GIN index on
                         runs.attributes, the alternative to the side table (built, timed, dropped)
  --help                 this text

Servers: BATON_TEST_REDIS_URL, BATON_TEST_POSTGRES_URL (the tests' variables and defaults).`;

type StoreName = 'redis' | 'postgres';

interface QueriesConfig {
  runs: number;
  workers: number;
  stores: StoreName[];
  samples: number;
  keep: boolean;
  compareGin: boolean;
}

function parse(argv: string[]): QueriesConfig | undefined {
  const { values } = parseCommandArgs(argv, USAGE, {
    runs: { type: 'string' },
    stores: { type: 'string' },
    samples: { type: 'string' },
    workers: { type: 'string' },
    keep: { type: 'boolean' },
    'compare-gin': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return undefined;
  const stores = (values.stores ?? 'redis,postgres').split(',').map((s) => s.trim());
  for (const store of stores) {
    if (store !== 'redis' && store !== 'postgres')
      throw new UsageError(`--stores names '${store}'; use redis, postgres or both (redis,postgres)`);
  }
  const runs = values.runs === undefined ? 1_000_000 : wholeNumber('--runs', values.runs);
  if (runs < 1_000) throw new UsageError(`--runs is ${runs}; give at least 1000`);
  const samples = values.samples === undefined ? 50 : wholeNumber('--samples', values.samples);
  if (samples < 1) throw new UsageError('--samples must be at least 1');
  const workers = values.workers === undefined ? 50 : wholeNumber('--workers', values.workers);
  return {
    runs,
    workers,
    stores: [...new Set(stores)] as StoreName[],
    samples,
    keep: values.keep === true,
    compareGin: values['compare-gin'] === true,
  };
}

// ---------------------------------------------------------------------------------------------
// The mix

const WORKFLOWS = 20;
const VERSIONS = 3;
/** Status by the run's bucket (0-99): a fleet that keeps its finished runs for a while. */
const MIX: ReadonlyArray<readonly [RunStatus, number]> = [
  ['pending', 3],
  ['running', 5],
  ['suspended', 12],
  ['completed', 70],
  ['failed', 7],
  ['cancelled', 3],
];

/** A 32-bit mix of the run number and a salt: independent draws for status, workflow, version, worker. */
function mix(i: number, salt: number): number {
  let x = Math.imul(i ^ Math.imul(salt, 0x27d4eb2d), 0x9e3779b1);
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  return x >>> 0;
}

function statusOf(i: number): RunStatus {
  let bucket = mix(i, 1) % 100;
  for (const [status, share] of MIX) {
    if (bucket < share) return status;
    bucket -= share;
  }
  return 'completed';
}

const workflowOf = (i: number): string => `wf_${String(mix(i, 2) % WORKFLOWS).padStart(2, '0')}`;
const versionOf = (i: number): number => 1 + (mix(i, 3) % VERSIONS);
const workerOf = (i: number, workers: number): string => `worker-${mix(i, 4) % workers}`;
const keyOf = (i: number): string | null => (i % 2 === 0 ? `order-${i}` : null);

function progress(label: string, done: number, total: number, started: number): void {
  const seconds = (performance.now() - started) / 1000;
  const rate = Math.round(done / Math.max(seconds, 0.001));
  process.stdout.write(
    `\r${label}: ${done.toLocaleString('en')} / ${total.toLocaleString('en')} runs (${Math.round((100 * done) / total)}%), ${rate.toLocaleString('en')} runs/s, ${seconds.toFixed(0)} s   `,
  );
}

// ---------------------------------------------------------------------------------------------
// Seeding

/** A chain10-like final checkpoint: what runs.finish stores next to a finished run. */
function finalCheckpoint(
  runId: string,
  status: 'completed' | 'failed' | 'cancelled',
  at: number,
): Checkpoint {
  const entries: Checkpoint['entries'] = Array.from({ length: 10 }, (_, seq) => ({
    type: 'ActivityCompleted',
    epoch: 1,
    at,
    seq,
    name: 'add_one',
    result: seq + 1,
    attempts: 1,
  }));
  return { runId, seq: 1, epoch: 1, journalPosition: 10, entries, status, schemaVersion: 1, createdAt: at };
}

/** One run through the store's own calls, to the status its number says. */
async function seedOneRedis(store: Store, i: number, workers: number): Promise<void> {
  const status = statusOf(i);
  const run = {
    runId: randomUUID(),
    workflow: workflowOf(i),
    version: versionOf(i),
    input: { orderId: i, amount: i % 1_000 },
    idempotencyKey: keyOf(i),
  };
  if (status === 'pending') {
    await store.runs.create(run);
    return;
  }
  const leased = await store.runs.createAndLease(run, workerOf(i, workers), 3_600_000);
  if (!leased.created || !leased.lease.ok) throw new Error(`run ${run.runId} was not created and leased`);
  const epoch = leased.lease.epoch;
  // Search attributes (queries-attributes.ts), under the lease as a worker writes them.
  await store.attributes.set(run.runId, epoch, attributesOf(i, SEEDED_AT));
  if (status === 'running') return;
  if (status === 'suspended') {
    const wakeAt = i % 3 === 0 ? Date.now() + 86_400_000 : null;
    const result = await store.leases.suspend({
      runId: run.runId,
      epoch,
      wakeAt,
      signals: ['approval'],
      consumedSignalIds: [],
    });
    if (!result.ok) throw new Error(`run ${run.runId} did not suspend: ${result.reason}`);
    return;
  }
  if (status === 'paused') throw new Error('the mix seeds no paused runs');
  const outcome: RunOutcome =
    status === 'completed'
      ? { status, result: 10 }
      : {
          status,
          error: { name: status === 'failed' ? 'ActivityFailedError' : 'CancelledError', message: 'seeded' },
        };
  await store.runs.finish(run.runId, epoch, outcome, finalCheckpoint(run.runId, status, Date.now()));
}

async function seedRedis(store: Store, runs: number, workers: number): Promise<void> {
  const started = performance.now();
  const window = 1_000;
  let next = 0;
  let done = 0;
  // `window` runs in flight on the store's connection: the calls go out pipelined.
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (next < runs) {
        const i = next++;
        await seedOneRedis(store, i, workers);
        if (++done % 10_000 === 0) progress('redis seeding', done, runs, started);
      }
    }),
  );
  progress('redis seeding', done, runs, started);
  process.stdout.write('\n');
}

const PG_BATCH = 100_000;

async function seedPostgres(client: pg.Client, schema: string, runs: number, workers: number): Promise<void> {
  const s = `"${schema}"`;
  const started = performance.now();
  const now = Date.now();
  const spanMs = 30 * 86_400_000;
  const statusCase = MIX.reduce(
    (acc, [status, share]) => {
      const upto = acc.upto + share;
      return { upto, sql: `${acc.sql} WHEN b < ${upto} THEN '${status}'` };
    },
    { upto: 0, sql: '' },
  ).sql;
  // Independent draws per run number and salt, as mix() gives on Redis (hashint8 is Postgres's own).
  await client.query(
    `CREATE FUNCTION pg_temp.h(g int, salt int) RETURNS bigint LANGUAGE sql IMMUTABLE AS
     $$ SELECT hashint8(g::bigint * 4 + salt) & 2147483647 $$`,
  );
  for (let from = 0; from < runs; from += PG_BATCH) {
    const to = Math.min(runs, from + PG_BATCH) - 1;
    // Same columns and values as the store's create/lease/suspend/finish functions write; the
    // statement-level triggers of migration 011 count the batch.
    await client.query(
      `
INSERT INTO ${s}.runs (run_id, workflow, version, input, idempotency_key, status, created_at, updated_at, result, error, attempts, attributes)
SELECT gen_random_uuid()::text, 'wf_' || lpad((pg_temp.h(g, 1) % ${WORKFLOWS})::text, 2, '0'), 1 + pg_temp.h(g, 2) % ${VERSIONS},
  json_build_object('orderId', g, 'amount', g % 1000),
  CASE WHEN g % 2 = 0 THEN 'order-' || g END,
  st, created, created + (g % 600000),
  CASE WHEN st = 'completed' THEN '10'::json END,
  CASE WHEN st = 'failed' THEN '{"name":"ActivityFailedError","message":"seeded"}'::json
       WHEN st = 'cancelled' THEN '{"name":"CancelledError","message":"seeded"}'::json END,
  CASE WHEN st = 'pending' THEN 0 ELSE 1 END,
  ${PG_ATTRIBUTES_SQL}
FROM (
  SELECT g, $1::bigint - $2::bigint + (g::bigint * $2::bigint / $3::bigint) AS created,
    CASE ${statusCase} ELSE 'completed' END AS st
  FROM (SELECT g, pg_temp.h(g, 0) % 100 AS b FROM generate_series($4::int, $5::int) g) numbered
) runs`,
      [now, spanMs, runs, from, to],
    );
    progress('postgres seeding (runs)', to + 1, runs, started);
  }
  process.stdout.write('\n');
  // Leases: every run claimed once (epoch 1); running ones held by a worker, the rest suspended or finished.
  await client.query(`
INSERT INTO ${s}.leases (run_id, epoch, owner, state, expires_at, waiting_for)
SELECT r.run_id, 1,
  CASE WHEN r.status = 'running' THEN 'worker-' || (hashtext(r.run_id) & 2147483647) % ${workers} END,
  CASE r.status WHEN 'running' THEN 'held' WHEN 'suspended' THEN 'suspended' ELSE 'finished' END,
  CASE WHEN r.status = 'running' THEN ${now} + 3600000 END,
  CASE WHEN r.status = 'suspended' THEN ARRAY['approval'] ELSE '{}'::text[] END
FROM ${s}.runs r WHERE r.status <> 'pending'`);
  await seedPostgresAttributes(client, schema);
  await client.query(`ANALYZE ${s}.runs`);
  await client.query(`ANALYZE ${s}.leases`);
  console.log(
    `postgres seeding done in ${((performance.now() - started) / 1000).toFixed(0)} s (runs, leases, ANALYZE)`,
  );
}

// ---------------------------------------------------------------------------------------------
// Measuring

interface Timing {
  query: string;
  p50: number;
  p95: number;
  /** Runs the page held (median over the samples). */
  rows: number;
  /** When the first page came back short with a cursor: p50 of the time to 50 runs or the end (5 samples). */
  fullPageP50?: number;
  fullPageCalls?: number;
}

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function timeQuery(
  name: string,
  samples: number,
  call: () => Promise<{ rows: number; more: () => Promise<{ rows: number; calls: number }> | undefined }>,
): Promise<Timing> {
  for (let i = 0; i < 5; i++) await call();
  const times: number[] = [];
  const rows: number[] = [];
  const fills: number[] = [];
  let fillCalls = 0;
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const page = await call();
    times.push(performance.now() - started);
    rows.push(page.rows);
    // Following a short page's cursors can take seconds: timed for the first five samples only.
    const more = fills.length < 5 ? page.more() : undefined;
    if (more !== undefined) {
      const filled = await more;
      fills.push(performance.now() - started);
      fillCalls = filled.calls;
    }
  }
  times.sort((a, b) => a - b);
  rows.sort((a, b) => a - b);
  fills.sort((a, b) => a - b);
  return {
    query: name,
    p50: quantile(times, 0.5),
    p95: quantile(times, 0.95),
    rows: quantile(rows, 0.5),
    ...(fills.length > 0 && { fullPageP50: quantile(fills, 0.5), fullPageCalls: fillCalls }),
  };
}

const LIMIT = 50;

/** Times a query (timeQuery) and prints its line. */
async function timed(name: string, samples: number, call: Parameters<typeof timeQuery>[2]): Promise<Timing> {
  const timing = await timeQuery(name, samples, call);
  console.log(
    `  ${name.padEnd(42)} p50 ${timing.p50.toFixed(1).padStart(7)} ms  p95 ${timing.p95.toFixed(1).padStart(7)} ms  ${String(timing.rows).padStart(3)} runs` +
      (timing.fullPageP50 === undefined
        ? ''
        : `  (short page: to 50 runs or the end in ${timing.fullPageP50.toFixed(0)} ms, ${timing.fullPageCalls} calls)`),
  );
  return timing;
}

async function measure(store: Store, samples: number): Promise<Timing[]> {
  // Run ids and times to filter by, taken from the data set itself.
  const newest = await store.runs.list({ limit: 1 });
  const oldest = await store.runs.list({ limit: 1, order: 'oldest' });
  const top = newest.runs[0]!;
  const from = oldest.runs[0]!.createdAt;
  const to = top.createdAt;
  // The middle tenth of the creation span.
  const rangeStart = from + (to - from) * 0.45;
  const rangeEnd = from + (to - from) * 0.55;
  // Prefixes of a run from the middle of the span: neither the first nor the last a walk meets.
  const middle = (await store.runs.list({ limit: 1, createdBefore: (from + to) / 2 })).runs[0] ?? top;
  const idPrefix = middle.runId.slice(0, 3);
  const onePrefix = middle.runId.slice(0, 8);

  /** One page, and (if it came back short with a cursor) the way to a full page. */
  const page = (query: RunQuery) => async () => {
    const first = await store.runs.list({ ...query, limit: LIMIT });
    const short = first.runs.length < LIMIT && first.cursor !== undefined;
    return {
      rows: first.runs.length,
      more: () =>
        short
          ? (async () => {
              let rows = first.runs.length;
              let cursor = first.cursor;
              let calls = 1;
              while (rows < LIMIT && cursor !== undefined && calls < 2_000) {
                const next = await store.runs.list({ ...query, limit: LIMIT - rows, cursor });
                rows += next.runs.length;
                cursor = next.cursor;
                calls++;
              }
              return { rows, calls };
            })()
          : undefined,
    };
  };
  const timings: Timing[] = [];
  const run = async (name: string, call: Parameters<typeof timeQuery>[2]): Promise<void> => {
    timings.push(await timed(name, samples, call));
  };
  await run('first page, unfiltered', page({}));
  await run('first page, status failed (7%)', page({ status: 'failed' }));
  await run('first page, status running (5%)', page({ status: 'running' }));
  await run('first page, wf_07 + failed (0.35%)', page({ workflow: 'wf_07', status: 'failed' }));
  await run('first page, wf_07 v2 + suspended', page({ workflow: 'wf_07', version: 2, status: 'suspended' }));
  await run(
    'first page, created-at range (10%)',
    page({ createdAfter: rangeStart, createdBefore: rangeEnd }),
  );
  await run(`first page, run-id prefix '${idPrefix}' (1/4096)`, page({ runIdPrefix: idPrefix }));
  await run(`first page, run-id prefix '${onePrefix}' (one run)`, page({ runIdPrefix: onePrefix }));
  await run('first page, worker worker-3', page({ worker: 'worker-3' }));
  const firstPage = await store.runs.list({ limit: LIMIT });
  await run('second page via cursor, unfiltered', async () => {
    const second = await store.runs.list({ limit: LIMIT, cursor: firstPage.cursor! });
    return { rows: second.runs.length, more: () => undefined };
  });
  const failedFirst = await store.runs.list({ limit: LIMIT, status: 'failed' });
  await run('second page via cursor, status failed', async () => {
    const second = await store.runs.list({ limit: LIMIT, status: 'failed', cursor: failedFirst.cursor! });
    return { rows: second.runs.length, more: () => undefined };
  });
  await measureAttributes({ store, run, page, limit: LIMIT });
  await run('countRuns', async () => {
    const counts = await store.runs.count();
    return { rows: Object.keys(counts.byWorkflow).length, more: () => undefined };
  });
  const counts = await store.runs.count();
  console.log(`  countRuns total ${counts.total.toLocaleString('en')}: ${JSON.stringify(counts.byStatus)}`);
  return timings;
}

// ---------------------------------------------------------------------------------------------
// Per store

async function redisPart(config: QueriesConfig): Promise<void> {
  const url = redisTestUrl();
  const prefix = `bench-q-${randomUUID().slice(0, 8)}:`;
  const admin = new Redis(url, { lazyConnect: true });
  await admin.connect();
  const store = redisStore({ url, keyPrefix: prefix });
  const usedMemory = async (): Promise<number> =>
    Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
  try {
    await store.connect();
    console.log(`\nredis (${url}), key prefix ${prefix}`);
    const before = await usedMemory();
    const started = performance.now();
    await seedRedis(store, config.runs, config.workers);
    const seedSeconds = (performance.now() - started) / 1000;
    const after = await usedMemory();
    let indexBytes = 0;
    const indexKeys = await admin.keys(`${prefix}index:*`);
    for (const key of indexKeys) indexBytes += Number(await admin.memory('USAGE', key, 'SAMPLES', 0));
    const mib = (bytes: number): string => `${(bytes / 1_048_576).toFixed(0)} MiB`;
    console.log(
      `redis: seeded ${config.runs.toLocaleString('en')} runs in ${seedSeconds.toFixed(0)} s; used_memory grew by ` +
        `${mib(after - before)} (${Math.round((after - before) / config.runs)} B a run, final checkpoints included); ` +
        `the query indexes (${indexKeys.length} keys) hold ${mib(indexBytes)}`,
    );
    await measure(store, config.samples);
  } finally {
    await store.close().catch(() => undefined);
    if (config.keep) console.log(`redis: kept, key prefix ${prefix}`);
    else {
      const removed = await removeRedisPrefix(admin, prefix);
      console.log(`redis: removed ${removed.toLocaleString('en')} keys of ${prefix}`);
    }
    admin.disconnect();
  }
}

async function removeRedisPrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let removed = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5_000);
    cursor = next;
    if (keys.length > 0) removed += await redis.unlink(...keys);
  } while (cursor !== '0');
  return removed;
}

async function postgresPart(config: QueriesConfig): Promise<void> {
  const url = postgresTestUrl();
  const schema = `bench_q_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const store = postgresStore({ url, schema });
  try {
    await store.connect();
    console.log(`\npostgres (${url.replace(/\/\/[^@]*@/, '//')}), schema ${schema}`);
    await seedPostgres(admin, schema, config.runs, config.workers);
    const sizes = await admin.query<{ runs: string; runs_indexes: string; leases: string; counts: string }>(
      `SELECT pg_table_size('"${schema}".runs') AS runs, pg_indexes_size('"${schema}".runs') AS runs_indexes,
              pg_total_relation_size('"${schema}".leases') AS leases, pg_total_relation_size('"${schema}".run_counts') AS counts`,
    );
    const mib = (v: string): string => `${(Number(v) / 1_048_576).toFixed(0)} MiB`;
    const row = sizes.rows[0]!;
    console.log(
      `postgres: runs table ${mib(row.runs)}, its indexes ${mib(row.runs_indexes)}, leases ${mib(row.leases)}, run_counts ${mib(row.counts)}`,
    );
    await measure(store, config.samples);
    if (config.compareGin)
      await compareGin(
        admin,
        schema,
        (name, call) => timed(name, config.samples, call).then(() => undefined),
        LIMIT,
      );
  } finally {
    await store.close().catch(() => undefined);
    if (config.keep) console.log(`postgres: kept, schema ${schema}`);
    else {
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      console.log(`postgres: dropped schema ${schema}`);
    }
    await admin.end();
  }
}

await runCommand(USAGE, parse, async (config) => {
  const started = performance.now();
  console.log(
    `run queries at ${config.runs.toLocaleString('en')} runs, ${config.workers} workers, ${config.samples} samples a query, page of ${LIMIT}`,
  );
  if (config.stores.includes('redis')) await redisPart(config);
  if (config.stores.includes('postgres')) await postgresPart(config);
  console.log(`\ndone in ${((performance.now() - started) / 1000).toFixed(0)} s`);
});
