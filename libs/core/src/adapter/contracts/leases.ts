/**
 * Leases (`store.leases`, {@link LeaseStore}): exclusive, expiring ownership of a run with a fencing
 * epoch, suspension, reaping and the store's clock. Part of the store contract (store.ts); the
 * store conformance suite checks it. A lease is taken and kept by the worker that runs the run;
 * what anyone may ask of a run (cancel, pause, resume) is the run's control (control.ts), which
 * changes the lease in the same atomic step.
 */

/**
 * A lease's state:
 * - `held`: an owner holds it until `expiresAt` (acquirable once expired), or, after a hand-off
 *   or a reap, nobody does (acquirable at once; `expiresAt` then only paces the reaper);
 * - `suspended`: the run waits for a timer or signal and holds no lease; acquirable at once;
 * - `paused`: an operator paused the run ({@link RunControlStore.requestPause}); it holds no lease, has
 *   no timer, and is acquired by nobody until {@link RunControlStore.resume}. Pausing a lease that
 *   was ever held moves it to the next epoch, so its last holder's late writes are fenced;
 * - `finished`: the run completed, failed or was cancelled; never acquirable again.
 */
export type LeaseState = 'held' | 'suspended' | 'paused' | 'finished';

export interface LeaseInfo {
  runId: string;
  epoch: number;
  owner: string | null;
  state: LeaseState;
  /** Store-clock expiry (ms) for `held`; null otherwise. */
  expiresAt: number | null;
  cancelRequested: boolean;
  /** Why the cancel was requested (the first request's reason), when one was given. */
  cancelReason?: string;
  /**
   * True while a pause is requested of a run a live owner holds (it stops at its next step and
   * calls {@link RunControlStore.pauseHeld}); absent otherwise. A run already paused has state `paused`.
   */
  pauseRequested?: boolean;
  /** Why the pause was requested (the first request's reason), when one was given, while paused or requested. */
  pauseReason?: string;
  /**
   * What a `suspended` run waits for (absent in every other state): the signal names its suspend
   * gave (a durable promise's and a child's end are signals too: PROMISE_SIGNAL, childSignalName)
   * and its timer's due time (store clock; null for none). A timer whose wake was lost is pushed
   * later by `timers.claimDue`, so `wakeAt` is when it fires next, not when it was first due.
   */
  waitingFor?: { signals: string[]; wakeAt: number | null };
}

export type AcquireResult =
  | { ok: true; epoch: number; cancelRequested: boolean }
  | { ok: false; reason: 'held'; owner: string | null; expiresAt: number }
  | { ok: false; reason: 'finished' }
  /** Paused: nobody may run it until it is resumed. Drop the message. */
  | { ok: false; reason: 'paused' };

export interface RenewRequest {
  runId: string;
  epoch: number;
}

export interface RenewResult {
  runId: string;
  /** False when the lease expired or a newer epoch owns it: the caller must stop at once. */
  ok: boolean;
  cancelRequested: boolean;
  /** True when a pause was requested of this run: stop at its next step and pause it; absent otherwise. */
  pauseRequested?: boolean;
}

export interface SuspendRequest {
  runId: string;
  epoch: number;
  /** Earliest time a timer (sleep or signal timeout) must wake the run; null for none. */
  wakeAt: number | null;
  /** Signal names the run waits for. */
  signals: string[];
  /** Signal ids the run has already consumed (so an old inbox entry does not count as pending). */
  consumedSignalIds: string[];
}

export type SuspendResult =
  /** Suspended; `paused` when a pause was requested meanwhile and the run is `paused` instead. */
  | { ok: true; paused?: boolean }
  /** Not suspended: a matching signal is already in the inbox, or a cancel is pending; carry on. */
  | { ok: false; reason: 'signal-pending' | 'cancel-requested' };

export interface LeaseStore {
  /**
   * Takes the run's lease for `owner` until now + `ttlMs` (store clock), with epoch = previous + 1.
   * Succeeds when the lease is absent, suspended, held by nobody (handed off or reaped), or held
   * but expired. Refused with `paused` when the run is paused, and when it is free but has a pause
   * request (its owner died or handed it off before it stopped): that lease becomes `paused`
   * then (a pending cancel withdrew any pause request, so it never meets one). Clears the run's timer and,
   * when the run is in the index, marks it `running` and counts the attempt (one round trip).
   */
  acquire(runId: string, owner: string, ttlMs: number): Promise<AcquireResult>;
  /** Extends many leases at once (one round trip per worker, not per run). */
  renew(requests: readonly RenewRequest[], ttlMs: number): Promise<RenewResult[]>;
  /**
   * Hands the run off: the lease stays `held` with no owner and expires now, so any worker may
   * acquire it at once, and the reaper re-enqueues it if the hand-off message is lost.
   * Returns false (and changes nothing) under a stale epoch.
   */
  release(runId: string, epoch: number): Promise<boolean>;
  /**
   * Atomically: checks the inbox for a pending signal named in `signals` and the cancel flag; if
   * neither, releases the lease, marks the lease and the run `suspended` and registers its timer
   * (if `wakeAt`).
   * Throws FencedWriteError under a stale epoch.
   */
  suspend(request: SuspendRequest): Promise<SuspendResult>;
  /**
   * Finds `held` leases that expired (store clock), gives each to nobody (so any worker may
   * acquire it at once and the old owner can no longer renew) with an expiry of now +
   * `reclaimAfterMs` (so it is reported once per period, not on every scan), and returns them.
   */
  reapExpired(limit: number, reclaimAfterMs: number): Promise<string[]>;
  get(runId: string): Promise<LeaseInfo | undefined>;
  /** The store's clock (ms since epoch). */
  now(): Promise<number>;
  /**
   * Records that the claim of `epoch` failed before its run could go on (the resume threw), and
   * returns how many claims in a row failed, this one included: the count carries on from a
   * failure recorded under `epoch - 1` and starts again at 1 otherwise, so a claim that went well in
   * between (and wrote nothing for it) breaks the chain. Recording the same epoch twice counts it
   * once. FencedWriteError when `epoch` is not the lease's epoch or the run is finished.
   */
  recordClaimFailure(runId: string, epoch: number): Promise<number>;
}
