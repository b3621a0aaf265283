/**
 * The run index (`store.runs`, {@link RunIndex}): run records, idempotency keys, final outcomes and
 * the redrive of a failed run. Part of the store contract (store.ts); `store.runs` also lists and
 * counts runs (run-queries.ts). The record itself is run-record.ts, which both read.
 */
import type { SerializedError } from '../../shared/errors.js';
import type { Checkpoint } from './checkpoints.js';
import type { AcquireResult } from './leases.js';
import type { RunLineage, RunRecord, RunStatus } from './run-record.js';

export interface NewRun {
  runId: string;
  workflow: string;
  version: number;
  input: unknown;
  idempotencyKey: string | null;
  /** W3C traceparent of the start message, kept for the spans of later attempts. */
  traceparent?: string | null;
  /**
   * A first checkpoint stored with the record, in the same atomic step and only when the run is
   * created (a fork: the original's history up to the fork point). Not fenced: no lease exists
   * yet. Its epoch is 0, so the first owner (epoch 1) loads it and replays from it.
   */
  checkpoint?: Checkpoint;
  /** A fork's origin, kept on the record. */
  forkedFrom?: RunLineage;
}

/** What {@link RunIndex.reopen} did. */
export type ReopenResult =
  | { reopened: true }
  /** Nothing changed: the run is unknown (`status` undefined), not `failed`, or its epoch moved on. */
  | { reopened: false; status: RunStatus | undefined };

export type RunOutcome =
  | { status: 'completed'; result: unknown }
  | { status: 'failed'; error: SerializedError }
  | { status: 'cancelled'; error: SerializedError };

/**
 * What {@link RunIndex.createAndLease} returns: the new run with its first lease, or the run that was already
 * known under that id or idempotency key (and no lease).
 */
export type CreatedAndLeased =
  { created: true; run: RunRecord; lease: AcquireResult } | { created: false; run: RunRecord };

/** A new run as `runs.createAndLease` takes it (a fork's checkpoint and origin go through `runs.create`). */
export type NewRunToLease = Omit<NewRun, 'checkpoint' | 'forkedFrom'>;

export interface RunIndex {
  /**
   * Creates the run unless its id, or its idempotency key, is already known; then returns the
   * existing record with `created: false`. The same key always yields the same run.
   */
  create(run: NewRun): Promise<{ created: boolean; run: RunRecord }>;
  /**
   * {@link create} and, only when that created the run, `leases.acquire(runId, owner, ttlMs)`, as one
   * atomic step (one round trip): how a worker claims the run of a start message. When the run (or
   * its idempotency key) was already known nothing changes and there is no `lease`: the caller
   * claims the existing run as it would any other. `run` is the record after the lease. A fork's
   * checkpoint and origin are not taken here (forks go through {@link create}).
   */
  createAndLease(run: NewRunToLease, owner: string, ttlMs: number): Promise<CreatedAndLeased>;
  get(runId: string): Promise<RunRecord | undefined>;
  /**
   * Atomically, under the fence: records the outcome, stores the final checkpoint if given, and
   * marks the lease `finished` so it is never acquired again. FencedWriteError under a stale epoch.
   */
  finish(runId: string, epoch: number, outcome: RunOutcome, checkpoint?: Checkpoint): Promise<void>;
  /**
   * The owner's fenced step when its run continues as new (core's author/continue-as-new.ts),
   * after the run's end is journaled and before it is recorded: marks the run as continuing as
   * `successorRunId` ({@link RunRecord.continuedAs}). From then on, atomically with this mark:
   * - `signals.deliver` keeps nothing for the run: a signal id its inbox already holds answers as
   *   a repeat does (`{ found: true, wake: false }`), any other answers `continuedAs` (and
   *   `dropped` once the run is finished), so the caller delivers it to the successor;
   * - `updates.request` keeps nothing: an id the run settled answers its kept outcome, any other
   *   answers `continuedAs` (and `finished` once the run is finished);
   * - `promises.complete` of the run's promises changes nothing and answers `runFinished` and
   *   `continuedAs`: the promise belonged to the run, and its successor does not wait for it.
   * So the run's inbox and pending update requests stay as they were at the mark, for the owner
   * to carry over. The first successor named is kept; a repeat (the end replayed after a crash,
   * under a later epoch) changes nothing. A run with no record keeps no mark. FencedWriteError
   * unless `epoch` is the epoch of the run's unfinished lease.
   */
  continueAs(runId: string, epoch: number, successorRunId: string): Promise<void>;
  /**
   * Redrive of a failed run, atomically and only while the run is `failed` and its finished
   * lease's epoch is `checkpoint.epoch`: stores `checkpoint` (the history to resume from), sets
   * the run `pending` (its error cleared) and the lease `held` by nobody, expiring now, so any
   * worker may acquire it at once (epoch + 1) and the reaper re-sends it should the caller's
   * message be lost. Of concurrent calls exactly one reopens; the others find it `pending`.
   * It also forgets the run's failed claims ({@link LeaseStore.recordClaimFailure}), so a redriven
   * run gets its full count of resume attempts again.
   */
  reopen(runId: string, checkpoint: Checkpoint): Promise<ReopenResult>;
}
