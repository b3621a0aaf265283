/**
 * Search attributes in `bench:queries` (docs/performance.md, "Search attributes at a million
 * runs"): the attributes each seeded run holds, how they get in (Redis: `store.attributes.set` under
 * the run's lease, as a worker's ctx.setAttributes writes them; Postgres: the runs' `attributes`
 * column in the same INSERT … SELECT as the runs, then their run_attributes rows in one statement,
 * whose triggers keep the counts), the queries timed, and, with `--compare-gin`, the same Postgres
 * filters over a GIN index on runs.attributes instead of the side table.
 *
 * Every run but a pending one (no lease to write under) holds four attributes, each drawn
 * independently from its run number:
 * - `customerId`, a keyword of 10,000 values (`c-0` … `c-9999`): about 97 runs each;
 * - `tier`, a keyword: `gold` 10%, `silver` 30%, `basic` 60%;
 * - `total`, a number from 0.00 to 999.99 (a range of 10 is 1%);
 * - `placedAt`, a time within the 30 days before seeding (a day is 3.3%).
 */
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import type { AttributeChanges, RunQuery, Store } from '@baton/core/adapter';

const CUSTOMERS = 10_000;
const DAY_MS = 86_400_000;
const SPAN_MS = 30 * DAY_MS;

/** A 32-bit mix of the run number and a salt (the seeding's own, with salts of its own). */
function mix(i: number, salt: number): number {
  let x = Math.imul(i ^ Math.imul(salt + 16, 0x27d4eb2d), 0x9e3779b1);
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  return x >>> 0;
}

const tierOf = (bucket: number): string => (bucket < 10 ? 'gold' : bucket < 40 ? 'silver' : 'basic');

/** The attributes of run `i`, seeded at `now`. */
export function attributesOf(i: number, now: number): AttributeChanges {
  return {
    customerId: { type: 'keyword', value: `c-${mix(i, 0) % CUSTOMERS}` },
    tier: { type: 'keyword', value: tierOf(mix(i, 1) % 100) },
    total: { type: 'number', value: (mix(i, 2) % 100_000) / 100 },
    placedAt: { type: 'time', value: now - (mix(i, 3) % SPAN_MS) },
  };
}

/**
 * The `attributes` column of a seeded run in SQL, over `g` (the run number) and `st` (its status),
 * drawing with pg_temp.h (the seeding's hash) at salts of their own; $1 is the seeding's now.
 */
export const PG_ATTRIBUTES_SQL = `CASE WHEN st <> 'pending' THEN jsonb_build_object(
    'customerId', jsonb_build_object('type', 'keyword', 'value', 'c-' || (pg_temp.h(g + 2000000000, 0) % ${CUSTOMERS})),
    'tier', jsonb_build_object('type', 'keyword', 'value',
      CASE WHEN pg_temp.h(g + 2000000000, 1) % 100 < 10 THEN 'gold'
           WHEN pg_temp.h(g + 2000000000, 1) % 100 < 40 THEN 'silver' ELSE 'basic' END),
    'total', jsonb_build_object('type', 'number', 'value', (pg_temp.h(g + 2000000000, 2) % 100000) / 100.0),
    'placedAt', jsonb_build_object('type', 'time', 'value', $1::bigint - pg_temp.h(g + 2000000000, 3) % ${SPAN_MS}))
  END`;

/**
 * The run_attributes rows of every seeded run, from its `attributes` column, as set_run_attributes()
 * writes them (migration 026); the statement-level triggers count the keywords as they go in.
 */
export async function seedPostgresAttributes(client: pg.Client, schema: string): Promise<void> {
  const s = `"${schema}"`;
  const started = performance.now();
  await client.query(`
INSERT INTO ${s}.run_attributes (run_id, name, type, keyword, num, created_at, workflow, status)
SELECT r.run_id, a.key, a.value ->> 'type',
       CASE WHEN a.value ->> 'type' IN ('keyword', 'boolean') THEN a.value ->> 'value' END,
       CASE WHEN a.value ->> 'type' IN ('number', 'time') THEN (a.value ->> 'value')::double precision END,
       r.created_at, r.workflow, r.status
FROM ${s}.runs r, jsonb_each(r.attributes) a
WHERE r.attributes IS NOT NULL`);
  await client.query(`ANALYZE ${s}.run_attributes`);
  console.log(
    `postgres: run_attributes rows written in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

/** What measure() lends: its timer and its page (with the way to a full page when short). */
export interface AttributeMeasuring {
  store: Store;
  run: (
    name: string,
    call: () => Promise<{ rows: number; more: () => undefined | Promise<{ rows: number; calls: number }> }>,
  ) => Promise<void>;
  page: (
    query: RunQuery,
  ) => () => Promise<{ rows: number; more: () => undefined | Promise<{ rows: number; calls: number }> }>;
  limit: number;
}

/** The attribute queries timed, on either store. */
export async function measureAttributes({ store, run, page, limit }: AttributeMeasuring): Promise<void> {
  const day = Date.now() - 15 * DAY_MS;
  await run('first page, attr customerId (1/10,000)', page({ attributes: { customerId: 'c-1234' } }));
  await run('first page, attr tier gold (10%)', page({ attributes: { tier: 'gold' } }));
  await run(
    'first page, attr tier gold + failed (0.7%)',
    page({ attributes: { tier: 'gold' }, status: 'failed' }),
  );
  await run(
    'first page, attr customerId + tier',
    page({ attributes: { customerId: 'c-1234', tier: 'gold' } }),
  );
  await run('first page, attr total range (1%)', page({ attributes: { total: { gte: 500, lt: 510 } } }));
  await run(
    'first page, attr placedAt range (3.3%)',
    page({ attributes: { placedAt: { type: 'time', gte: day, lt: day + DAY_MS } } }),
  );
  const gold = await store.runs.list({ limit, attributes: { tier: 'gold' } });
  await run('second page via cursor, attr tier gold', async () => {
    const second = await store.runs.list({ limit, attributes: { tier: 'gold' }, cursor: gold.cursor! });
    return { rows: second.runs.length, more: () => undefined };
  });
  await run('attributes.count customerId', async () => {
    const counts = await store.attributes.count('customerId', { type: 'keyword', value: 'c-1234' });
    return { rows: counts.total, more: () => undefined };
  });
  await run('attributes.count tier gold', async () => {
    const counts = await store.attributes.count('tier', { type: 'keyword', value: 'gold' });
    return { rows: counts.total, more: () => undefined };
  });
  const counted = await store.attributes.count('tier', { type: 'keyword', value: 'gold' });
  console.log(`  tier gold: ${counted.total.toLocaleString('en')} runs: ${JSON.stringify(counted.byStatus)}`);
}

/**
 * The alternative to the side table (migration 026), timed on the same data: a GIN index on
 * runs.attributes (jsonb_path_ops) and the same pages as `@>` containment, newest first, each one
 * statement as the store's listing is. Creates the index, times, drops it.
 */
export async function compareGin(
  client: pg.Client,
  schema: string,
  time: (name: string, call: () => Promise<{ rows: number; more: () => undefined }>) => Promise<void>,
  limit: number,
): Promise<void> {
  const s = `"${schema}"`;
  const started = performance.now();
  await client.query(`CREATE INDEX runs_attributes_gin ON ${s}.runs USING gin (attributes jsonb_path_ops)`);
  await client.query(`ANALYZE ${s}.runs`);
  const size = await client.query<{ size: string }>(
    `SELECT pg_relation_size('${s}.runs_attributes_gin') AS size`,
  );
  console.log(
    `\npostgres, the GIN alternative: index built in ${((performance.now() - started) / 1000).toFixed(0)} s, ` +
      `${(Number(size.rows[0]!.size) / 1_048_576).toFixed(0)} MiB`,
  );
  const page =
    (contains: object, extra = '') =>
    async () => {
      const rows = await client.query(
        `SELECT r.run_id FROM ${s}.runs r WHERE r.attributes @> $1::jsonb ${extra}
       ORDER BY r.created_at DESC, r.run_id COLLATE "C" DESC LIMIT ${limit + 1}`,
        [JSON.stringify(contains)],
      );
      return { rows: Math.min(rows.rowCount ?? 0, limit), more: () => undefined };
    };
  const keyword = (name: string, value: string): object => ({ [name]: { type: 'keyword', value } });
  await time('GIN: first page, customerId (1/10,000)', page(keyword('customerId', 'c-1234')));
  await time('GIN: first page, tier gold (10%)', page(keyword('tier', 'gold')));
  await time('GIN: first page, tier gold + failed', page(keyword('tier', 'gold'), "AND r.status = 'failed'"));
  const sizes = await client.query<{ table: string; indexes: string }>(
    `SELECT pg_table_size('${s}.run_attributes') AS table, pg_indexes_size('${s}.run_attributes') AS indexes`,
  );
  console.log(
    `  the side table for comparison: run_attributes ${(Number(sizes.rows[0]!.table) / 1_048_576).toFixed(0)} MiB, ` +
      `its indexes ${(Number(sizes.rows[0]!.indexes) / 1_048_576).toFixed(0)} MiB`,
  );
  await client.query(`DROP INDEX ${s}.runs_attributes_gin`);
}
