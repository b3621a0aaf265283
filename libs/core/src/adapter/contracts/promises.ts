/**
 * Durable promises (`store.promises`, {@link PromiseStore}): the record of each promise a run made
 * with `ctx.promise`, keyed by its token, completed once from outside. Part of the store contract
 * (store.ts); core's author/promise.ts has the feature's invariants, docs/promises.md the guide.
 *
 * What a completion does to the run is the signal inbox's (waits.ts): in the same atomic step as
 * the record, {@link PromiseStore.complete} adds to the run's inbox the entry named `baton.promise`
 * with id `baton.promise:<seq>` and the completion as its payload, once, and wakes the run when it
 * is suspended waiting for that name, exactly as `signals.deliver` would. So a completion is never
 * lost between a run's check of its inbox and its suspension (leases.suspend checks the inbox).
 *
 * Left out on purpose: the value's check against the schema (the caller's, before it completes)
 * and its protection (the caller seals the payload; the store keeps it as given), and the
 * comparison of two completions (the caller compares the record's payload with its own: sealed
 * payloads of one value differ byte for byte). A promise's records go with its run: the retention
 * that deletes the run deletes them in the same step.
 */

/** The name of the inbox entries that carry completions to their runs (see the module's comment). */
export const PROMISE_SIGNAL = 'baton.promise';

/** The inbox id of the completion of the promise made at step `seq`: one per promise. */
export function promiseSignalId(seq: number): string {
  return `${PROMISE_SIGNAL}:${seq}`;
}

/** A promise's state: `pending` until completed once, then `resolved`, `rejected` or `timed-out`. */
export type PromiseState = 'pending' | 'resolved' | 'rejected' | 'timed-out';

/** One durable promise, as the store keeps it. */
export interface PromiseRecord {
  /** The token (core's `isPromiseToken` shape): a secret, the record's key. */
  token: string;
  runId: string;
  /** The run's step that made it (`ctx.promise`). */
  seq: number;
  state: PromiseState;
  /** The JSON Schema a value must match at completion; absent for none. */
  schema?: Record<string, unknown>;
  /** When the run gives up waiting (store clock, ms), or null for never. */
  timeoutAt: number | null;
  /** When the record was made (store clock, ms). */
  createdAt: number;
  /** When it was completed or timed out (store clock, ms); absent while pending. */
  completedAt?: number;
  /** The completion's payload as given to {@link PromiseStore.complete}; absent unless resolved or rejected. */
  payload?: unknown;
}

/** The answer of {@link PromiseStore.complete}. */
export type PromiseCompleteResult =
  /** No such token. */
  | { found: false }
  /**
   * This call completed the promise. `wake`: the run was suspended waiting for a completion and is
   * acquirable now; enqueue a wake message.
   */
  | { found: true; completed: true; runId: string; wake: boolean }
  /**
   * Nothing changed: the promise was completed or timed out before (`record` says how), or its
   * run has finished (`runFinished`, the record still pending), or has continued as new
   * (`runFinished` and `continuedAs`, the successor's run id: the promise was the run's own, and
   * its successor does not wait for it).
   */
  | { found: true; completed: false; record: PromiseRecord; runFinished?: boolean; continuedAs?: string };

export interface PromiseStore {
  /**
   * Records a pending promise of a run (its owner, at `ctx.promise`), the time its own clock's.
   * A second call with a known token changes nothing: the owner writes the record again after a
   * crash, not knowing whether the first write landed.
   */
  create(promise: {
    token: string;
    runId: string;
    seq: number;
    timeoutAt: number | null;
    schema?: Record<string, unknown>;
  }): Promise<void>;
  /**
   * Completes a pending promise with `outcome` (`resolved` or `rejected`) and `payload`, and
   * delivers the payload to the run's inbox in the same atomic step (see the module's comment).
   * Nothing changes for an unknown token, a promise no longer pending, or one whose run has
   * finished (its lease `finished`) or continued as new (`runs.continueAs`); see
   * {@link PromiseCompleteResult}.
   */
  complete(
    token: string,
    completion: { outcome: 'resolved' | 'rejected'; payload: unknown },
  ): Promise<PromiseCompleteResult>;
  /**
   * The owner's step at a promise's deadline: a pending promise becomes `timed-out`. Returns the
   * record as it is afterwards (a completion that came first is kept and returned), or undefined
   * for an unknown token.
   */
  expire(token: string): Promise<PromiseRecord | undefined>;
  /** The promise with this token, or undefined. */
  get(token: string): Promise<PromiseRecord | undefined>;
  /** The run's promises, by step. */
  forRun(runId: string): Promise<PromiseRecord[]>;
}
