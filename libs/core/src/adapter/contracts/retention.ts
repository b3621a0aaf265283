/**
 * Retention (`store.retention`, {@link RetentionStore}): finished runs past their time to live,
 * deleting one, and the sweep's batch with its tombstones. Part of the store contract (store.ts);
 * what counts as finished is run-record.ts (FINISHED_RUN_STATUSES).
 */

/**
 * Retention of finished runs (docs/retention.md). A run is finished when its record's status is
 * `completed`, `failed` or `cancelled` (its lease is then `finished` too: `runs.finish` sets both in
 * one step). Nothing of any other run is ever listed or deleted.
 *
 * Left out on purpose: the journal (the caller purges it on the transport, after the store data
 * is gone) and runs that have a lease but no record (claimed without `runs.create`): never listed.
 */
export interface RetentionStore {
  /**
   * Finished runs whose finish (`updatedAt`) is at least `olderThanMs` in the past on the store's
   * clock, oldest first, at most `limit`.
   */
  expired(olderThanMs: number, limit: number): Promise<string[]>;
  /**
   * Atomically, only while the run is finished: removes its record, checkpoints, lease, cancel
   * flag, timer, signal inbox and its idempotency key (a later start with that key creates a new
   * run). Resolves true when deleted, false when the store does not know the run. Throws
   * RunStateError, naming the run and its status, when the run is not finished. Its large
   * payloads ({@link PayloadStore}) go in the same step.
   */
  delete(runId: string): Promise<boolean>;
  /**
   * The retention sweep's batch, in one round trip: deletes up to `limit` finished runs whose
   * finish is at least `olderThanMs` in the past (store clock), oldest first, each exactly as
   * {@link delete} does, and leaves a {@link RunTombstone} for each that lives `tombstoneMs`;
   * drops up to `limit` tombstones past their life. A run another caller is deleting at that
   * moment is skipped, never waited for, so sweeps running at once delete disjoint runs and never
   * block each other. Resolves the deleted run ids.
   */
  deleteExpired(olderThanMs: number, limit: number, tombstoneMs: number): Promise<string[]>;
  /**
   * The tombstone {@link deleteExpired} left for a run, while it lives: how `result()` tells a
   * run retention removed from one not created yet. Undefined otherwise ({@link delete} leaves none).
   */
  tombstone(runId: string): Promise<RunTombstone | undefined>;
}

/** What is left of a run the retention sweep deleted, for `tombstoneMs` after the delete. */
export interface RunTombstone {
  runId: string;
  /** When the sweep deleted it, on the store's clock (ms). */
  deletedAt: number;
}
