/**
 * The in-process store's run queries (`store.runs.list` and `count`): listing a checked query
 * (checked-store.ts checks it and makes its cursors) and counting runs over the maps of
 * memory-state.ts. The real stores keep indexes and counts as runs change; this store is for the
 * demo and unit tests, so it scans its runs on each call, which is always current and cannot drift.
 */
import type {
  AttributeTest,
  CheckedRunQuery,
  ListedRun,
  RunCounts,
  RunFilter,
  RunListing,
} from '../adapter/contracts/run-queries.js';
import type { StoreAdapter } from '../adapter/contracts/store.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import type { RunRecord, RunStatus } from '../adapter/contracts/run-record.js';
import { RUN_STATUSES } from '../adapter/contracts/run-record.js';
import { isAfter } from '../adapter/run-query-check.js';
import type { MemoryState } from './memory-state.js';

function list(state: MemoryState, query: CheckedRunQuery): RunListing {
  const matching = [...state.runs.values()].filter(
    (run) =>
      matches(state, run, query) && (query.after === undefined || isAfter(run, query.after, query.order)),
  );
  matching.sort((a, b) => compare(a, b, query.order));
  // One more than the page tells whether a next page exists.
  const page = matching.slice(0, query.limit);
  const runs = page.map((run) => listed(state, run));
  const last = page[page.length - 1];
  return matching.length > query.limit && last !== undefined
    ? { runs, next: { createdAt: last.createdAt, runId: last.runId } }
    : { runs };
}

function count(state: MemoryState): RunCounts {
  const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
  const byWorkflow: RunCounts['byWorkflow'] = {};
  for (const run of state.runs.values()) {
    byStatus[run.status] += 1;
    const counts = (byWorkflow[run.workflow] ??= {});
    counts[run.status] = (counts[run.status] ?? 0) + 1;
  }
  return { total: state.runs.size, byStatus, byWorkflow };
}

/** Oldest first by createdAt then run id; reversed for newest first. */
/** `store.runs`' queries over the state. */
export const runQueries: OperationsOf<MemoryState, Pick<StoreAdapter['runs'], 'list' | 'count'>> = {
  list,
  count,
};

function compare(a: RunRecord, b: RunRecord, order: 'newest' | 'oldest'): number {
  const ascending = a.createdAt - b.createdAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);
  return order === 'oldest' ? ascending : -ascending;
}

/** The lease's holder when it is held (expiry not considered), as the contract's `worker` says. */
function holder(state: MemoryState, runId: string): string | null {
  const lease = state.leases.get(runId);
  return lease?.state === 'held' ? lease.owner : null;
}

/** Whether the run holds the attribute the test names, of its type, with a value that passes it. */
function passes(run: RunRecord, test: AttributeTest): boolean {
  const held = run.attributes?.[test.name];
  if (held === undefined || held.type !== test.type) return false;
  if (test.eq !== undefined) return held.value === test.eq;
  const value = held.value as number;
  return (
    (test.gt === undefined || value > test.gt) &&
    (test.gte === undefined || value >= test.gte) &&
    (test.lt === undefined || value < test.lt) &&
    (test.lte === undefined || value <= test.lte)
  );
}

function matches(
  state: MemoryState,
  run: RunRecord,
  { filter, statuses, attributes }: CheckedRunQuery,
): boolean {
  const f: RunFilter = filter;
  return (
    (attributes === undefined || attributes.every((test) => passes(run, test))) &&
    (statuses === undefined || statuses.has(run.status)) &&
    (f.workflow === undefined || run.workflow === f.workflow) &&
    (f.version === undefined || run.version === f.version) &&
    (f.createdAfter === undefined || run.createdAt >= f.createdAfter) &&
    (f.createdBefore === undefined || run.createdAt < f.createdBefore) &&
    (f.updatedAfter === undefined || run.updatedAt >= f.updatedAfter) &&
    (f.updatedBefore === undefined || run.updatedAt < f.updatedBefore) &&
    (f.runIdPrefix === undefined || run.runId.startsWith(f.runIdPrefix)) &&
    (f.idempotencyKeyPrefix === undefined ||
      (run.idempotencyKey != null && run.idempotencyKey.startsWith(f.idempotencyKeyPrefix))) &&
    (f.worker === undefined || holder(state, run.runId) === f.worker)
  );
}

function listed(state: MemoryState, run: RunRecord): ListedRun {
  return {
    ...structuredClone(run),
    owner: holder(state, run.runId),
    epoch: state.leases.get(run.runId)?.epoch ?? 0,
  };
}
