/**
 * Control of a run (`store.control`, {@link RunControlStore}): cancel, pause and resume, asked by
 * anyone (a client, the console), and the owner's side of each (closing its cancels before it
 * journals the run's end, stopping for a pause). Part of the store contract (store.ts); each call
 * changes the run's lease (leases.ts) in the same atomic step as its record.
 */

/** The answer of {@link RunControlStore.requestCancel}. */
export interface CancelRequestResult {
  /** False for a run the store does not know (not started yet, or deleted). */
  found: boolean;
  /** True when the run was suspended or paused and is now acquirable: enqueue a wake message. */
  wake: boolean;
  /** True when the run has finished or its owner is journaling its end: the cancel changed nothing. */
  tooLate?: boolean;
}

/**
 * What {@link RunControlStore.requestPause} did:
 * - `paused`: the run held no live lease (pending, suspended, handed off, reaped or expired) and is
 *   `paused` now;
 * - `pause-requested`: a live owner holds it; it is asked to stop at its next step (the flag its
 *   renewals report) and pauses then; should it die first, the next acquire pauses the run;
 * - `finished`: the run completed, failed or was cancelled; nothing changed;
 * - `cancel-requested`: a cancel is pending, and a cancel wins over a pause; nothing changed.
 */
export type PauseRequestResult =
  { found: false } | { found: true; state: 'paused' | 'pause-requested' | 'finished' | 'cancel-requested' };

/**
 * What {@link RunControlStore.resume} did. `resumed` is true when the run was paused (it is now
 * acquirable, and `wake` tells the caller to enqueue a wake message) or had a pause requested (the
 * request is withdrawn; `wake` false). Otherwise nothing changed.
 */
export interface ResumeResult {
  found: boolean;
  resumed: boolean;
  wake: boolean;
}

/**
 * What {@link RunControlStore.pauseHeld} did: paused, or not: a cancel is pending (the cancel wins),
 * or the pause request was withdrawn ({@link RunControlStore.resume}) before the owner stopped.
 */
export type PauseHeldResult = { ok: true } | { ok: false; reason: 'cancel-requested' | 'not-requested' };

/**
 * Operators' control of a run and the owner's side of it: cancel, pause and resume. Split from
 * {@link LeaseStore} because these are asked of a run by anyone (a client, the console), while a
 * lease is only taken and kept by the worker that runs it; each changes the lease in the same
 * atomic step as the run's record.
 */
export interface RunControlStore {
  /**
   * Sets the run's cancel flag and withdraws any pause request (a cancel wins over a pause). `wake`
   * is true when the run was suspended or paused: it is now acquirable
   * (held, expired) and the caller should enqueue a wake message. `found` is false for an unknown run.
   * `reason` is kept with the flag (the first request's reason wins) and read back by
   * {@link LeaseStore.get} as `cancelReason`, so the run ends cancelled with the caller's words.
   *
   * The request is **accepted** when this call sets the flag: the run will end `cancelled`. It is
   * `tooLate` (nothing changes, the flag is not set) when the run has finished, or when its owner
   * has closed the run's cancels ({@link closeCancels}) under the lease's current epoch because it
   * is about to journal the run's end. While the run is held, an accepted request tells the owner
   * at once through {@link watchCancels} (stores that have it), so it does not wait for its next
   * renewal to stop the run.
   */
  requestCancel(runId: string, reason?: string): Promise<CancelRequestResult>;
  /**
   * The owner's fenced step before it journals a run's completed or failed end: atomically, when a
   * cancel was accepted, answers it (`cancelRequested: true`, with the kept reason) and changes
   * nothing, and the owner ends the run `cancelled` instead; otherwise closes the run's cancels for
   * `epoch`, so a later {@link requestCancel} is `tooLate`. The close lasts only for `epoch`: should
   * the owner die before its end is recorded, the next owner's epoch accepts cancels again until it
   * closes them itself. FencedWriteError when `epoch` is not the epoch of the run's held lease.
   */
  closeCancels(runId: string, epoch: number): Promise<{ cancelRequested: boolean; cancelReason?: string }>;
  /**
   * Optional: calls `listener(runId)` when a cancel is accepted ({@link requestCancel}) for a run
   * whose held lease `workerId` owns, as told by the store (a notification channel of the
   * worker's; on Postgres its presence session, which must be registered). Best effort: a call
   * missed while the channel is down is made up by the lease renewal, which reports the flag too
   * ({@link RenewResult.cancelRequested}). Calls may be spurious (a run the worker no longer holds).
   * Returns a function that stops the calls.
   */
  watchCancels?(workerId: string, listener: (runId: string) => void): () => void;
  /**
   * Pauses the run, or asks its owner to: see {@link PauseRequestResult}. A run that holds no live
   * lease becomes `paused` at once (its timer dropped: the worker registers it again from the
   * journal after the resume), its record `paused`; a pending run with no lease yet gets a paused
   * lease of epoch 0. A paused run is never acquired, reaped or woken by a timer; a signal to it is
   * kept for after the resume. `reason` is kept (the first request's wins) and read back by
   * {@link LeaseStore.get} as `pauseReason`. A repeated request changes nothing and answers the state.
   */
  requestPause(runId: string, reason?: string): Promise<PauseRequestResult>;
  /**
   * The owner's fenced write that ends its session for a pause: the held lease of `epoch` becomes
   * `paused` (no owner, no expiry, no timer), the record `paused`, the pause request cleared. A
   * pending cancel wins: nothing changes and the answer says `cancel-requested`; a request that was
   * withdrawn meanwhile: nothing changes, `not-requested`. Either way the owner hands the run off.
   * FencedWriteError when `epoch` is not the lease's or the lease is not held.
   */
  pauseHeld(runId: string, epoch: number): Promise<PauseHeldResult>;
  /**
   * Resumes a paused run: its lease becomes held by nobody, expiring now (acquirable at once, the
   * reaper re-sends it should the wake be lost), its record `pending`, its pause reason dropped. A
   * run with only a pause request has the request withdrawn. See {@link ResumeResult}.
   */
  resume(runId: string): Promise<ResumeResult>;
}
