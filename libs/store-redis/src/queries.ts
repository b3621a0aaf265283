/**
 * Run queries on Redis (`store.runs.list` of a checked query, and `count`; checked-store.ts in
 * @baton/core checks the query and makes its cursors): runs.list walks the query indexes (sorted
 * sets by createdAt, kept by the scripts that change a run; see lua/prelude.lua) in one Lua script
 * per page, and runs.count reads the counts those scripts keep. reindexRuns indexes a data set written before the indexes
 * existed; connect runs it once per data set (the index-version key records that it has).
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
import { TYPE_LETTER } from './attributes.js';
import { decodeRunRecord } from './codec.js';
import { str, type StoreContext } from './context.js';

/**
 * Runs one page's script examines at most (besides runs tied at the cursor's createdAt): bounds the
 * time a page blocks the server when few runs match. A page cut short by it has fewer runs than
 * asked for (maybe none) and a cursor to carry on from.
 */
export const LIST_SCAN_BUDGET = 5_000;

/** Bumped when the index layout changes, so connect indexes an existing data set again. */
export const INDEX_VERSION = '2';

/** Run ids per reindexing script call: short enough not to block the server noticeably. */
const REINDEX_BATCH = 500;

/** A filter bound as the script takes it: '' for none. */
const opt = (value: string | number | undefined): string | number => value ?? '';

/** `budget`: runs one page examines at most; tests give a small one to reach the cut-short page. */
export async function listRuns(
  ctx: StoreContext,
  query: CheckedRunQuery,
  budget = LIST_SCAN_BUDGET,
): Promise<RunListing> {
  const { filter, after, limit } = query;
  const reply = (await ctx.run(
    'list-runs',
    [],
    [
      ctx.keys.prefix,
      query.order,
      limit + 1,
      budget,
      opt(after?.createdAt),
      opt(after?.runId),
      opt(filter.createdAfter),
      opt(filter.createdBefore),
      query.statuses === undefined ? '' : [...query.statuses].join(','),
      opt(filter.workflow),
      opt(filter.version),
      opt(filter.updatedAfter),
      opt(filter.updatedBefore),
      opt(filter.runIdPrefix),
      opt(filter.idempotencyKeyPrefix),
      opt(filter.worker),
      ...attributeTestArgs(query),
    ],
  )) as [unknown[][], unknown, unknown];
  const [found, lastCreatedAt, lastRunId] = reply;
  const runs = found.map(listedRun);
  if (runs.length > limit) {
    const page = runs.slice(0, limit);
    const last = page[page.length - 1]!;
    return { runs: page, next: { createdAt: last.createdAt, runId: last.runId } };
  }
  // The script stopped at its budget: carry on from the last run it examined.
  if (str(lastRunId) !== '')
    return { runs, next: { createdAt: Number(lastCreatedAt), runId: str(lastRunId) } };
  return { runs };
}

/** The search attribute tests as list-runs.lua takes them: their count, then 7 fields each. */
function attributeTestArgs(query: CheckedRunQuery): (string | number)[] {
  const tests = query.attributes ?? [];
  return [
    tests.length,
    ...tests.flatMap((test) => [
      test.name,
      TYPE_LETTER[test.type],
      test.eq === undefined ? '' : String(test.eq),
      opt(test.gt),
      opt(test.gte),
      opt(test.lt),
      opt(test.lte),
    ]),
  ];
}

/** `store.runs`' queries on the connection. */
export const runQueries: OperationsOf<StoreContext, Pick<StoreAdapter['runs'], 'list' | 'count'>> = {
  list: listRuns,
  count,
};

/** One match of list-runs.lua: { record pairs, lease epoch, lease state, lease owner }. */
function listedRun(match: unknown[]): ListedRun {
  const [pairs, epoch, state, owner] = match;
  const record = decodeRunRecord(pairs as unknown[]);
  const held = str(state) === 'held' && str(owner) !== '';
  return { ...record, owner: held ? str(owner) : null, epoch: str(epoch) === '' ? 0 : Number(epoch) };
}

async function count(ctx: StoreContext): Promise<RunCounts> {
  const fields = await ctx.redis.hgetall(ctx.keys.runCounts);
  const byStatus = Object.fromEntries(RUN_STATUSES.map((status) => [status, 0])) as Record<RunStatus, number>;
  const byWorkflow: RunCounts['byWorkflow'] = {};
  let total = 0;
  for (const [field, value] of Object.entries(fields)) {
    const count = Number(value);
    if (field.startsWith('status:')) {
      byStatus[field.slice('status:'.length) as RunStatus] = count;
      total += count;
    } else if (field.startsWith('workflow:')) {
      // 'workflow:<status>:<name>': a status has no ':', a workflow name may.
      const rest = field.slice('workflow:'.length);
      const colon = rest.indexOf(':');
      const status = rest.slice(0, colon) as RunStatus;
      const workflow = rest.slice(colon + 1);
      (byWorkflow[workflow] ??= {})[status] = count;
    }
  }
  return { total, byStatus, byWorkflow };
}

/** SCAN's MATCH pattern for a literal prefix: glob characters in it are escaped. */
function literalPattern(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * Indexes every run record of this key prefix that is not indexed yet, in batches (SCAN, then one
 * script call per batch that indexes each run from its record atomically), and records the index
 * version. Idempotent, and safe while workers run: a run a worker changes meanwhile is indexed by
 * that worker's script or by this one, never twice. Returns how many runs it indexed.
 */
export async function reindexRuns(ctx: StoreContext): Promise<number> {
  const { keys, redis } = ctx;
  const runPrefix = keys.run('');
  let indexed = 0;
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(
      cursor,
      'MATCH',
      `${literalPattern(runPrefix)}*`,
      'COUNT',
      REINDEX_BATCH,
    );
    cursor = next;
    if (found.length > 0) {
      const runIds = found.map((key) => key.slice(runPrefix.length));
      indexed += Number(await ctx.run('index-runs', [], [keys.prefix, ...runIds]));
    }
  } while (cursor !== '0');
  await redis.set(keys.indexVersion, INDEX_VERSION);
  return indexed;
}

/** At connect: indexes a data set whose index version is not this code's (once per data set). */
export async function ensureIndexed(ctx: StoreContext): Promise<void> {
  if ((await ctx.redis.get(ctx.keys.indexVersion)) !== INDEX_VERSION) await reindexRuns(ctx);
}
