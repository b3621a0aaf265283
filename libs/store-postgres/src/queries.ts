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
 * 4. A filter with a search attribute's equality walks that value's rows of run_attributes
 *    (migration 023) from the cursor, in the listing's order, joining each to its run: its
 *    created_at is the run's, so the keyset and the order are taken on it. Any other attribute
 *    test is an EXISTS on run_attributes the planner may drive from either side.
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
 * The attribute test a page walks the rows of (invariant 4): the first equality, whose index
 * (run_attributes_by_keyword or _by_number) is in the listing's order after its value.
 */
function leadTest(query: CheckedRunQuery): AttributeTest | undefined {
  return query.attributes?.find((test) => test.eq !== undefined);
}

/** The conditions on run_attributes alias `a` that one test makes. */
function attributeConditions(a: string, test: AttributeTest, param: (value: unknown) => string): string[] {
  const where = [`${a}.name = ${param(test.name)}`, `${a}.type = ${param(test.type)}`];
  if (test.type === 'keyword' || test.type === 'boolean') {
    where.push(`${a}.keyword = ${param(String(test.eq))}`);
    return where;
  }
  if (test.eq !== undefined) where.push(`${a}.num = ${param(test.eq)}::double precision`);
  const bounds = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
  for (const [bound, op] of Object.entries(bounds) as [keyof typeof bounds, string][]) {
    const value = test[bound];
    if (value !== undefined) where.push(`${a}.num ${op} ${param(value)}::double precision`);
  }
  return where;
}

/**
 * The WHERE conditions and their parameters for a checked query, keyset condition included. With
 * a `lead` test, the page walks run_attributes `x` (invariant 4): its conditions are on `x`, and
 * so are the created-at range and the keyset (the same values as the run's).
 */
function conditions(
  query: CheckedRunQuery,
  lead: AttributeTest | undefined,
): { where: string[]; params: unknown[] } {
  const { filter, statuses, after, order } = query;
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const o = lead === undefined ? 'r' : 'x';
  if (lead !== undefined) where.push(...attributeConditions('x', lead, param));
  for (const test of query.attributes ?? []) {
    if (test === lead) continue;
    where.push(
      `EXISTS (SELECT 1 FROM {{schema}}.run_attributes a WHERE a.run_id = r.run_id AND ${attributeConditions('a', test, param).join(' AND ')})`,
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
  const lead = leadTest(query);
  const { where, params } = conditions(query, lead);
  const direction = query.order === 'newest' ? 'DESC' : 'ASC';
  const o = lead === undefined ? 'r' : 'x';
  params.push(query.limit + 1);
  const sql = `
SELECT ${RUN_COLUMNS},
  CASE WHEN l.state = 'held' THEN l.owner END AS lease_owner,
  coalesce(l.epoch, 0) AS lease_epoch
FROM ${lead === undefined ? '{{schema}}.runs r' : '{{schema}}.run_attributes x JOIN {{schema}}.runs r ON r.run_id = x.run_id'}
LEFT JOIN {{schema}}.leases l ON l.run_id = r.run_id
${where.length === 0 ? '' : `WHERE ${where.join('\n  AND ')}`}
ORDER BY ${o}.created_at ${direction}, ${o}.run_id COLLATE "C" ${direction}
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
