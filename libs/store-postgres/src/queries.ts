/**
 * Run queries in SQL (`store.runs.list` of a checked query, and `count`; checked-store.ts in
 * @baton/core checks the query and makes its cursors): one statement per page, over the indexes
 * and the counts table of migration 011 (run_queries).
 *
 * Invariants:
 * 1. A page is one SELECT: the filter, the keyset condition after the cursor and the order all
 *    in SQL, run id compared under COLLATE "C" (byte order, as the other stores compare), LIMIT
 *    one more than the page so the extra row tells whether a next page exists.
 * 2. Owner and epoch come from the run's lease row in the same statement: owner only while the
 *    lease is `held`, epoch 0 before the first claim.
 * 3. runs.count reads run_counts, which triggers keep in the transaction that changes a run, so it
 *    never counts the runs one by one.
 * 4. A filter with search attributes leads with one test (leadTest) and walks its rows of
 *    run_attributes (migration 026), joining each to its run; its created_at is the run's, so the
 *    keyset and the order are taken on it. Each other attribute test is a scalar subquery on the
 *    run's row (its primary key), which Postgres never turns into a join, so the plan is the one the
 *    SQL's shape leaves, whatever a prepared statement's generic plan would guess about the values:
 *    - an equality walks its value's index (run_attributes_by_keyword or _by_number) from the
 *      cursor, in the listing's order: a page costs its runs and those skipped for other tests;
 *    - a range is first counted, up to RANGE_SORT_LIMIT rows of by_number (one index range): a
 *      narrow one is read whole and sorted (its ORDER BY matches no index, so no walk is planned);
 *      a wide one walks the attribute in order (run_attributes_by_name_created) testing each
 *      value, which is in the index (its condition is written so no other index serves it).
 */
import {
  RUN_STATUSES,
  type CheckedRunQuery,
  type ListedRun,
  type OperationsOf,
  type RunCounts,
  type RunListing,
  type RunStatus,
  type StoreAdapter,
} from '@baton/core/adapter';
import { ConfigError } from '@baton/core';
import type { Db } from './db.js';
import { RUN_COLUMNS, toRunRecord, type RunRow } from './runs.js';

interface ListedRow extends RunRow {
  lease_owner: string | null;
  lease_epoch: number;
}

/** A LIKE pattern matching the strings that start with `prefix` (its own % _ \ taken literally). */
function startsWith(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * A time bound as the bigint column compares with it: created_at and updated_at are whole ms, so
 * `>= 1.5` and `< 1.5` mean `>= 2` and `< 2`; bounds beyond any ms timestamp are clamped into
 * bigint's range rather than failing the cast.
 */
function msBound(value: number): number {
  return Math.min(Math.max(Math.ceil(value), -Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
}

/** One search attribute test of a checked query (checked, typed, times in ms). */
type AttributeTest = NonNullable<CheckedRunQuery['attributes']>[number];

/**
 * The most rows of a range a page reads and sorts (invariant 4); a wider range walks its
 * attribute in the listing's order instead, where its matches are dense enough to fill a page.
 */
export const RANGE_SORT_LIMIT = 5_000;

/**
 * The attribute test a page leads with (invariant 4): the first equality, else the first range;
 * for a range, `walk` says whether it is wider than RANGE_SORT_LIMIT (counted first).
 */
interface Lead {
  test: AttributeTest;
  walk: boolean;
}

async function leadOf(db: Db, query: CheckedRunQuery): Promise<Lead | undefined> {
  const tests = query.attributes ?? [];
  const equality = tests.find((test) => test.eq !== undefined);
  if (equality !== undefined) return { test: equality, walk: false };
  const range = tests[0];
  if (range === undefined) return undefined;
  const params: unknown[] = [];
  const param = (value: unknown): string => (params.push(value), `$${params.length}`);
  params.push(RANGE_SORT_LIMIT + 1);
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM {{schema}}.run_attributes a
       WHERE ${attributeConditions('a', range, param, false).join(' AND ')} LIMIT $1) t`,
    params,
  );
  return { test: range, walk: (row?.n ?? 0) > RANGE_SORT_LIMIT };
}

/**
 * The conditions on run_attributes alias `a` that one test makes. `opaque` writes a number's
 * conditions on an expression of the column (`a.num + 0`), which no index serves: the walk of a
 * wide range then stays the walk.
 */
function attributeConditions(
  a: string,
  test: AttributeTest,
  param: (value: unknown) => string,
  opaque: boolean,
): string[] {
  const where = [`${a}.name = ${param(test.name)}`, `${a}.type = ${param(test.type)}`];
  if (test.type === 'keyword' || test.type === 'boolean') {
    where.push(`${a}.keyword = ${param(String(test.eq))}`);
    return where;
  }
  const num = opaque ? `(${a}.num + 0)` : `${a}.num`;
  if (test.eq !== undefined) where.push(`${num} = ${param(test.eq)}::double precision`);
  const bounds = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
  for (const [bound, op] of Object.entries(bounds) as [keyof typeof bounds, string][]) {
    const value = test[bound];
    if (value !== undefined) where.push(`${num} ${op} ${param(value)}::double precision`);
  }
  return where;
}

/**
 * The WHERE conditions and their parameters for a checked query, keyset condition included. With
 * a `lead` test, the page walks run_attributes `x` (invariant 4): its conditions are on `x`, and
 * so are the created-at range and the keyset (the same values as the run's).
 */
function conditions(query: CheckedRunQuery, lead: Lead | undefined): { where: string[]; params: unknown[] } {
  const { filter, statuses, after, order } = query;
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const o = lead === undefined ? 'r' : 'x';
  if (lead !== undefined) where.push(...attributeConditions('x', lead.test, param, lead.walk));
  for (const test of query.attributes ?? []) {
    if (test === lead?.test) continue;
    // A scalar subquery (invariant 4): one probe of the run's row per run the walk reaches.
    where.push(
      `(SELECT true FROM {{schema}}.run_attributes a WHERE a.run_id = r.run_id AND ${attributeConditions('a', test, param, false).join(' AND ')})`,
    );
  }
  if (statuses !== undefined) where.push(`r.status = ANY (${param([...statuses])}::text[])`);
  if (filter.workflow !== undefined) where.push(`r.workflow = ${param(filter.workflow)}`);
  if (filter.version !== undefined)
    // bigint: a version beyond integer's range matches nothing instead of failing the cast.
    where.push(`r.version = ${param(filter.version)}::bigint`);
  if (filter.createdAfter !== undefined)
    where.push(`${o}.created_at >= ${param(msBound(filter.createdAfter))}`);
  if (filter.createdBefore !== undefined)
    where.push(`${o}.created_at < ${param(msBound(filter.createdBefore))}`);
  if (filter.updatedAfter !== undefined) where.push(`r.updated_at >= ${param(msBound(filter.updatedAfter))}`);
  if (filter.updatedBefore !== undefined)
    where.push(`r.updated_at < ${param(msBound(filter.updatedBefore))}`);
  if (filter.runIdPrefix !== undefined) where.push(`r.run_id LIKE ${param(startsWith(filter.runIdPrefix))}`);
  if (filter.idempotencyKeyPrefix !== undefined)
    where.push(`r.idempotency_key LIKE ${param(startsWith(filter.idempotencyKeyPrefix))}`);
  if (filter.worker !== undefined) where.push(`l.state = 'held' AND l.owner = ${param(filter.worker)}`);
  if (after !== undefined) {
    // This store issues cursors with whole-ms createdAt only; anything else was made up.
    if (!Number.isSafeInteger(after.createdAt))
      throw new ConfigError(
        'run query: cursor is malformed (not a cursor this store issued); start the listing again without a cursor',
      );
    const compare = order === 'newest' ? '<' : '>';
    where.push(
      `(${o}.created_at, ${o}.run_id COLLATE "C") ${compare} (${param(after.createdAt)}::bigint, ${param(after.runId)}::text)`,
    );
  }
  return { where, params };
}

async function list(db: Db, query: CheckedRunQuery): Promise<RunListing> {
  const lead = await leadOf(db, query);
  const { where, params } = conditions(query, lead);
  const direction = query.order === 'newest' ? 'DESC' : 'ASC';
  const o = lead === undefined ? 'r' : 'x';
  // A narrow range is read whole and sorted: an order no index gives keeps the planner from walking.
  const sortedAt =
    lead !== undefined && lead.test.eq === undefined && !lead.walk ? '(x.created_at + 0)' : `${o}.created_at`;
  params.push(query.limit + 1);
  const sql = `
SELECT ${RUN_COLUMNS},
  CASE WHEN l.state = 'held' THEN l.owner END AS lease_owner,
  coalesce(l.epoch, 0) AS lease_epoch
FROM ${lead === undefined ? '{{schema}}.runs r' : '{{schema}}.run_attributes x JOIN {{schema}}.runs r ON r.run_id = x.run_id'}
LEFT JOIN {{schema}}.leases l ON l.run_id = r.run_id
${where.length === 0 ? '' : `WHERE ${where.join('\n  AND ')}`}
ORDER BY ${sortedAt} ${direction}, ${o}.run_id COLLATE "C" ${direction}
LIMIT $${params.length}`;
  const rows = await db.query<ListedRow>(sql, params);
  const page = rows.slice(0, query.limit);
  const runs: ListedRun[] = page.map((row) => ({
    ...toRunRecord(row),
    owner: row.lease_owner,
    epoch: row.lease_epoch,
  }));
  const last = runs.at(-1);
  return rows.length > query.limit && last !== undefined
    ? { runs, next: { createdAt: last.createdAt, runId: last.runId } }
    : { runs };
}

// Sums the shards of each (workflow, status); a count back at zero keeps its row but is not shown.
const COUNTS_SQL = `
SELECT c.workflow, c.status, sum(c.count)::bigint AS count
FROM {{schema}}.run_counts c
GROUP BY c.workflow, c.status
HAVING sum(c.count) > 0`;

async function count(db: Db): Promise<RunCounts> {
  return countsOf(await db.query<CountRow>(COUNTS_SQL));
}

/** A count of runs of one workflow in one status, as the counts tables are summed into. */
export interface CountRow {
  workflow: string;
  status: RunStatus;
  count: number;
}

/** RunCounts from the rows of a counts table (run_counts; run_attribute_counts in attributes.ts). */
export function countsOf(rows: readonly CountRow[]): RunCounts {
  const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
  const byWorkflow: RunCounts['byWorkflow'] = {};
  let total = 0;
  for (const { workflow, status, count } of rows) {
    byStatus[status] += count;
    (byWorkflow[workflow] ??= {})[status] = count;
    total += count;
  }
  return { total, byStatus, byWorkflow };
}

/** `store.runs`' queries over the pool. */
export const runQueries: OperationsOf<Db, Pick<StoreAdapter['runs'], 'list' | 'count'>> = { list, count };
