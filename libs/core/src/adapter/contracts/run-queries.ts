/**
 * Run queries: how an operator (the `baton` CLI, the console, `@baton/client`) finds runs in a
 * store of millions. Part of the Store contract ({@link RunQueries}); every store implements it
 * over indexes kept in the same atomic step that changes a run, so no index drifts from the run it
 * describes, and the store conformance suite checks it on every store.
 *
 * Order and pages: runs come newest first (or oldest first) by `createdAt`, ties broken by run id,
 * a key that never changes once a run exists. A page ends with an opaque `cursor` naming the last
 * run returned; the next page starts strictly after it. A run that changes status between two
 * pages is therefore neither repeated nor skipped on account of the order, and runs created after
 * the first page appear only on a newest-first listing started afresh.
 *
 * Checks and cursors are core's, not the adapters': a store adapter implements `runs.list` over a
 * {@link CheckedRunQuery} and answers a {@link RunListing} (`StoreAdapter`, store.ts); `checkedStore`
 * (adapter/checked-store.ts) checks the caller's {@link RunQuery} first (ConfigError naming the
 * field), reads its cursor back into a position, and issues the next page's cursor from the
 * position the adapter answers, so every store refuses and pages alike.
 */
import type { AttributeType } from '../../shared/attributes.js';
import type { RunRecord, RunStatus } from './run-record.js';

/**
 * A test of one search attribute (docs/search-attributes.md). A plain value is equality, its type
 * that of the value: a string a keyword, a number a number, a boolean a boolean, a Date a time.
 * An object gives a range (number and time: `{ gte: 10, lt: 100 }`, bounds as numbers or Dates)
 * or an equality with its type spelled out (`{ type: 'time', eq: 1764000000000 }`); `type` is
 * needed only where the values do not tell (a time given in ms).
 */
export type AttributeCondition =
  | string
  | number
  | boolean
  | Date
  | {
      type?: AttributeType;
      eq?: string | number | boolean | Date;
      gt?: number | Date;
      gte?: number | Date;
      lt?: number | Date;
      lte?: number | Date;
    };

/**
 * One attribute's test as a store adapter receives it ({@link CheckedRunQuery.attributes}):
 * checked, its type known, times in ms, and either `eq` or one or two bounds.
 */
export interface AttributeTest {
  name: string;
  type: AttributeType;
  eq?: string | number | boolean;
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

/** Which runs a query or a count covers: every field given must match (AND); none given: all. */
export interface RunFilter {
  /** One status, or several (any of them). */
  status?: RunStatus | readonly RunStatus[];
  /** Exact workflow name. */
  workflow?: string;
  /** Exact workflow version (usually with `workflow`). */
  version?: number;
  /** `createdAt` at or after (ms, store clock). */
  createdAfter?: number;
  /** `createdAt` before (ms, store clock), exclusive. */
  createdBefore?: number;
  /** `updatedAt` at or after (ms, store clock). */
  updatedAfter?: number;
  /** `updatedAt` before (ms, store clock), exclusive. */
  updatedBefore?: number;
  /** The run id starts with this (case-sensitive). */
  runIdPrefix?: string;
  /** The idempotency key starts with this (case-sensitive); runs without a key never match. */
  idempotencyKeyPrefix?: string;
  /** The worker whose lease on the run is `held` now (the lease's owner; expiry not considered). */
  worker?: string;
  /**
   * Search attributes the run holds, by name (docs/search-attributes.md): each must hold
   * (`{ customerId: '42', total: { gte: 100 } }`); at most 8. A run without the attribute, or
   * with it under another type, never matches.
   */
  attributes?: Readonly<Record<string, AttributeCondition>>;
}

export interface RunQuery extends RunFilter {
  /** `newest` (the default) or `oldest` first, by `createdAt` then run id. */
  order?: 'newest' | 'oldest';
  /** Runs per page: 1 to {@link MAX_RUN_PAGE}; default {@link DEFAULT_RUN_PAGE}. */
  limit?: number;
  /** The `cursor` of the previous page, from a query with the same filter and order. */
  cursor?: string;
}

/** A run as a listing shows it: the record, and who holds its lease at which epoch. */
export interface ListedRun extends RunRecord {
  /** The worker holding the run's lease (`held`), else null. */
  owner: string | null;
  /** The lease's epoch (0 before the first claim). */
  epoch: number;
}

export interface RunPage {
  runs: ListedRun[];
  /** Where the next page starts; absent on the last page. */
  cursor?: string;
}

/** How many runs there are, by status, and by workflow and status. */
export interface RunCounts {
  total: number;
  byStatus: Record<RunStatus, number>;
  /** Workflow name -> status -> count; a workflow with no run is absent. */
  byWorkflow: Record<string, Partial<Record<RunStatus, number>>>;
}

export const DEFAULT_RUN_PAGE = 50;
export const MAX_RUN_PAGE = 1_000;

/** A run's place in a listing: the order's key (`createdAt`, then run id). */
export interface RunPosition {
  createdAt: number;
  runId: string;
}

/**
 * A run query as a store adapter receives it (`StoreAdapter`, store.ts): checked by `checkedStore`, so
 * every field is valid, statuses a set, the defaults filled in, and the cursor read back into the
 * position the page starts after.
 */
export interface CheckedRunQuery {
  /** The filter, statuses sorted (the form a cursor's fingerprint is taken of). */
  filter: RunFilter;
  /** The statuses asked for; undefined: any. */
  statuses: ReadonlySet<RunStatus> | undefined;
  order: 'newest' | 'oldest';
  limit: number;
  /** Where the page starts (exclusive), from the cursor. */
  after: RunPosition | undefined;
  /** The filter's attribute tests, by name; absent when it has none. */
  attributes?: readonly AttributeTest[];
}

/**
 * A page as a store adapter answers a {@link CheckedRunQuery}: the runs, and where the next page
 * starts (the last run examined) when there is one; `checkedStore` turns `next` into the opaque
 * cursor the caller gets.
 */
export interface RunListing {
  runs: ListedRun[];
  next?: RunPosition;
}

export interface RunQueries {
  /**
   * One page of the runs `query` matches, in its order. Throws ConfigError (BATON_CONFIG) naming
   * the field for an invalid filter (a limit out of range, a status that does not exist, a range
   * whose start is not before its end) and for a cursor this store did not issue or that belongs
   * to another filter or order ("malformed cursor": start the listing again without it).
   */
  list(query?: RunQuery): Promise<RunPage>;
  /** Counts of every run in the store; cheap (kept as the runs change, not counted per call). */
  count(): Promise<RunCounts>;
}
