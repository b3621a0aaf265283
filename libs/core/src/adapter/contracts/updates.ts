/**
 * Updates (`store.updates`, {@link UpdateStore}): a request to a running run that its workflow
 * answers (`client.update` → `ctx.onUpdate`). The store keeps each run's requests in arrival order
 * until its owner settles them, and each settled request's outcome under its update id until the
 * run is deleted (retention), so a caller that gave up asks again with the same id and gets the
 * kept answer (docs/updates.md). Part of the store contract (store.ts).
 *
 * Invariants (each store keeps them atomically, per run):
 * 1. An update id is answered once: a request whose id the run already settled changes nothing and
 *    answers the kept outcome; one whose id is still pending changes nothing. The first settle of
 *    an id wins and takes it out of the pending list; a later one answers the kept outcome.
 * 2. A request to a finished run (its lease `finished`) keeps nothing (`finished: true`), unless
 *    the id was settled before the end: then the kept outcome is the answer. Nor does a request to
 *    a run that has continued as new (`runs.continueAs`): its answer names the successor
 *    (`continuedAs`), unless the id was settled before.
 * 3. A request to a suspended run makes it acquirable at once, as a signal for it does (`wake`:
 *    the caller enqueues a wake message; should that be lost, the reaper finds the lease). A
 *    request to a held or paused run only waits: the owner reads it, the paused run once resumed.
 *    The owner never misses one because of a suspension: a request either lands before the
 *    suspension (the owner checks {@link UpdateStore.waiting} after it suspends, and wakes the run)
 *    or after it (and wakes it itself).
 * 4. Only the lease's current holder settles ({@link UpdateStore.settle} is fenced by epoch), so a
 *    zombie's answer, computed from steps a newer owner may have run otherwise, is never kept.
 *
 * Left out on purpose: the journal's part (the owner journals UpdateAccepted and UpdateCompleted
 * on the bus, before and after it settles) and telling the owner at once; an owner finds new
 * requests when it reads {@link UpdateStore.pending} (on claim, before it suspends) and by asking
 * {@link UpdateStore.waiting} about all its runs in one call every few hundred milliseconds.
 */
import { ConfigError, type SerializedError } from '../../shared/errors.js';

/** One request waiting for the run's owner, as {@link UpdateStore.pending} reads it. */
export interface UpdateRequest {
  /** The caller's id for this request: a repeat with the same id is the same request. */
  updateId: string;
  /** The update's name (`defineUpdate(name)`). */
  name: string;
  /** The arguments, as the caller sent them (sealed when the client encrypts). */
  args: unknown;
  /** When the store received it, on its clock. */
  requestedAt: number;
}

/**
 * How an update ended: `completed` with the handler's result, `failed` with what the handler threw,
 * or `rejected` before anything was journaled (its arguments failed the update's schema or
 * validator, or the workflow registers no handler of that name).
 */
export type UpdateOutcome =
  { status: 'completed'; result: unknown } | { status: 'failed' | 'rejected'; error: SerializedError };

/** A settled update, kept under its id until the run is deleted. */
export interface KeptUpdate {
  updateId: string;
  name: string;
  outcome: UpdateOutcome;
  /** When the owner settled it, on the store's clock. */
  settledAt: number;
}

/** What {@link UpdateStore.request} did. */
export interface UpdateRequestResult {
  /** False for a run the store has no record of (not started yet, or deleted). */
  found: boolean;
  /** True when the run was suspended and is now acquirable: enqueue a wake message. */
  wake: boolean;
  /** The run has finished and the id was never settled: nothing was kept (invariant 2). */
  finished?: boolean;
  /** The id was settled before: its outcome, and nothing changed (invariant 1). */
  kept?: KeptUpdate;
  /**
   * The run has continued as new as this run (`runs.continueAs`) and never settled the id: nothing
   * was kept; ask the successor. `finished` comes with it once the run's end is recorded (until
   * then its owner is still carrying its pending requests over).
   */
  continuedAs?: string;
}

export interface UpdateStore {
  /**
   * Adds a request to the run's pending list, once per update id (invariant 1), and wakes a
   * suspended run (invariant 3). A run needs its record (`runs.create`): `found` is false without
   * one.
   */
  request(runId: string, request: Omit<UpdateRequest, 'requestedAt'>): Promise<UpdateRequestResult>;
  /** The run's requests not settled yet, in arrival order. */
  pending(runId: string): Promise<UpdateRequest[]>;
  /** Which of `runIds` have a request not settled yet (in no particular order): an owner's poll. */
  waiting(runIds: readonly string[]): Promise<string[]>;
  /**
   * Keeps the outcome of a request and takes it out of the pending list, the first settle of an id
   * winning (invariant 1); answers the kept update, this one or the earlier. A request need not be
   * pending to be settled (an owner may answer one it read before a repeat arrived). Fenced
   * (invariant 4): FencedWriteError unless `epoch` is the epoch of the run's held lease.
   */
  settle(runId: string, epoch: number, settlement: Omit<KeptUpdate, 'settledAt'>): Promise<KeptUpdate>;
  /** The kept outcome of `updateId`, or undefined while it is pending or unknown. */
  outcome(runId: string, updateId: string): Promise<KeptUpdate | undefined>;
}

/** Longest update id a store accepts. */
export const MAX_UPDATE_ID_LENGTH = 256;

/** Why `updateId` is no update id (undefined when it is one): 1-256 characters, none a control character. */
export function updateIdProblem(updateId: unknown): string | undefined {
  if (typeof updateId !== 'string' || updateId.length === 0 || updateId.length > MAX_UPDATE_ID_LENGTH) {
    return `must be a string of 1-${MAX_UPDATE_ID_LENGTH} characters`;
  }
  // eslint-disable-next-line no-control-regex -- the point: refuse them
  if (/[\u0000-\u001f\u007f]/.test(updateId)) return 'must not hold control characters';
  return undefined;
}

/**
 * Refuses an update id or name no store should see, naming what is wrong: `checkedStore` calls it
 * before the store adapter is asked (adapter/checked-store.ts), so no adapter does.
 */
export function checkUpdateFields(fields: { updateId: unknown; name?: unknown }): void {
  const problem = updateIdProblem(fields.updateId);
  if (problem !== undefined) {
    throw new ConfigError(
      `update id ${JSON.stringify(fields.updateId) ?? String(fields.updateId)} ${problem}`,
    );
  }
  if ('name' in fields && (typeof fields.name !== 'string' || fields.name.length === 0)) {
    throw new ConfigError(
      `update name ${JSON.stringify(fields.name) ?? String(fields.name)} is not a non-empty string`,
    );
  }
}
