/**
 * The store contract: Redis or Postgres (or memory). The store is the source of truth for who
 * owns a run and whether it is alive; every time comparison uses the store's own clock.
 *
 * A store is one object per capability ({@link Store}: `store.leases.acquire(…)`), each a section
 * of the conformance suite:
 * - `leases`, {@link LeaseStore}: exclusive, expiring ownership with a fencing epoch; suspension;
 *   reaping; the store's clock;
 * - `control`, {@link RunControlStore}: cancel, pause and resume of a run;
 * - `checkpoints`, {@link CheckpointStore}: fenced snapshots with history;
 * - `runs`, {@link RunIndex} and {@link RunQueries} (contracts/run-queries.ts): run records,
 *   idempotency keys, final outcomes; listing and counting runs;
 * - `timers`, {@link TimerStore}: due timers of suspended runs;
 * - `signals`, {@link SignalInbox}: signals delivered to a run, kept until retention;
 * - `retention`, {@link RetentionStore}: finished runs past their time to live, and deleting one;
 * - `payloads`, {@link PayloadStore}: large payloads by reference;
 * - `fleet`, {@link FleetStore} (contracts/fleet.ts): the live workers' reports, for operators;
 * - `schedules`, {@link ScheduleStore} (contracts/schedules.ts): schedules, fired with compare-and-set;
 * - `concurrency`, {@link ConcurrencyStore} (contracts/concurrency.ts): slots per concurrency key,
 *   in arrival order;
 * - `rateLimits`, {@link RateLimitStore} (contracts/rate-limits.ts): grants per named limit and
 *   key, in a sliding window;
 * - `presence`, {@link PresenceStore} (optional): which workers are alive, bound to their store
 *   connections, so a killed worker's runs are resumed when its connection drops instead of when
 *   its leases run out. A store without it (the in-memory one) leaves `presence` out; the worker
 *   then finds a crashed worker's runs by lease expiry alone, and the conformance suite skips the
 *   presence section for it.
 *
 * Lifecycle, the same as a transport's ({@link Adapter}): created unconnected, `connect()`
 * prepares and is safe to repeat, `close()` is final and safe to repeat, and every operation after
 * close() rejects with BATON_CLOSED.
 *
 * Left out on purpose: the journal (it lives on the transport) and delivery of messages (the
 * store tells the caller when a wake is needed; the caller enqueues it).
 */
import type { JournalIndex } from './group-journal.js';
import type { Adapter } from './adapter.js';
import type { SerializedError } from '../../shared/errors.js';
import type { JournalEntry } from '../../shared/journal.js';
import type { FleetStore } from './fleet.js';
import type { RunQueries } from './run-queries.js';
import type { ScheduleStore } from './schedules.js';
import type { ConcurrencyStore } from './concurrency.js';
import type { RateLimitStore } from './rate-limits.js';
import type { RunLineage, RunRecord, RunStatus } from './run-record.js';

// ---------------------------------------------------------------------------------------------
// Leases

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
}

export type AcquireResult =
  | { ok: true; epoch: number; cancelRequested: boolean }
  | { ok: false; reason: 'held'; owner: string | null; expiresAt: number }
  | { ok: false; reason: 'finished' }
  /** Paused: nobody may run it until it is resumed. Drop the message. */
  | { ok: false; reason: 'paused' };

/** The answer of {@link RunControlStore.requestCancel}. */
export interface CancelRequestResult {
  /** False for a run the store does not know (not started yet, or deleted). */
  found: boolean;
  /** True when the run was suspended or paused and is now acquirable: enqueue a wake message. */
  wake: boolean;
  /** True when the run has finished or its owner is journaling its end: the cancel changed nothing. */
  tooLate?: boolean;
}

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

// ---------------------------------------------------------------------------------------------
// Checkpoints

export interface Checkpoint {
  runId: string;
  /** Monotonic per run, assigned by the writer (1, 2, …). */
  seq: number;
  /** Epoch of the writer. */
  epoch: number;
  /** Last journal position the snapshot covers; a resume reads the journal after it. */
  journalPosition: number;
  /** The effective (fenced-filtered) journal entries up to `journalPosition`: the replay cache. */
  entries: JournalEntry[];
  status: 'running' | 'suspended' | 'completed' | 'failed' | 'cancelled';
  /** Version of this record's layout, for migrations on load. */
  schemaVersion: number;
  createdAt: number;
}

export interface CheckpointSummary {
  seq: number;
  epoch: number;
  journalPosition: number;
  status: Checkpoint['status'];
  schemaVersion: number;
  createdAt: number;
  /** Encoded size in bytes. */
  size: number;
}

export interface CheckpointStore {
  /** Stores a checkpoint only while `checkpoint.epoch` is the lease's epoch; else FencedWriteError. */
  write(checkpoint: Checkpoint): Promise<void>;
  /**
   * The newest checkpoint, or undefined; with `seq`, the kept checkpoint of that sequence number
   * (the newest one, should a run hold two with the same seq), or undefined.
   */
  load(runId: string, seq?: number): Promise<Checkpoint | undefined>;
  /** Every kept checkpoint of the run, oldest first. */
  list(runId: string): Promise<CheckpointSummary[]>;
}

// ---------------------------------------------------------------------------------------------
// Run index

// RunStatus, RunLineage and RunRecord live in run-record.ts, which run-queries.ts reads too.
export type { RunLineage, RunRecord, RunStatus } from './run-record.js';

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

// ---------------------------------------------------------------------------------------------
// Timers and signals

export interface DueTimer {
  runId: string;
  dueAt: number;
}

export interface TimerStore {
  /**
   * Returns suspended runs whose timer is due (store clock), earliest first, and pushes each
   * returned timer `redeliverAfterMs` into the future so a lost wake is retried. A timer is
   * removed when its run's lease is acquired.
   */
  claimDue(limit: number, redeliverAfterMs: number): Promise<DueTimer[]>;
}

export interface InboxSignal {
  signalId: string;
  name: string;
  payload: unknown;
  receivedAt: number;
}

export interface SignalInbox {
  /**
   * Adds a signal to the run's inbox (a second delivery of the same `signalId` is ignored).
   * `wake` is true when the run was suspended waiting for this name: it is now acquirable and the
   * caller should enqueue a wake message. `found` is false for an unknown run.
   * A finished run (its lease `finished`: completed, failed or cancelled) keeps nothing: the
   * signal is dropped and the answer says `dropped: true` (absent otherwise), so signals sent
   * after the end cannot pile up in an inbox nobody reads.
   */
  deliver(
    runId: string,
    signal: Omit<InboxSignal, 'receivedAt'>,
  ): Promise<{ found: boolean; wake: boolean; dropped?: boolean }>;
  /** The run's inbox, in arrival order. */
  read(runId: string): Promise<InboxSignal[]>;
}

// ---------------------------------------------------------------------------------------------
// Presence

/**
 * Fast failure detection. A worker registers itself once; the registration is bound to a store
 * connection that lives exactly as long as the worker process (a session-level advisory lock in
 * Postgres, a named client connection in Redis). When the process dies (SIGKILL, OOM), the
 * server closes that connection at once, and any worker's next {@link PresenceStore.reapDead} hands the
 * dead worker's runs on, long before their leases would have run out.
 *
 * Left out on purpose: anything that needs a dropped connection. A partitioned or frozen worker
 * keeps its connection; for that, lease expiry (and fencing) remains the backstop.
 *
 * Optional in {@link Store} (`store.presence`): a store implements all of it or none.
 * Without it nothing is lost but speed: a killed worker's runs resume once their leases expire.
 */
export interface PresenceStore {
  /**
   * Registers `workerId` as alive for as long as this store's connection lives. The adapter keeps
   * the registration across its own reconnects. Registering the same id twice is harmless.
   */
  register(workerId: string): Promise<void>;
  /** Removes the registration (graceful stop): the worker is no longer considered at all. */
  unregister(workerId: string): Promise<void>;
  /**
   * Finds registered workers whose presence connection is gone, forgets them, and reaps every
   * `held` lease they own exactly as {@link LeaseStore.reapExpired} reaps an expired one
   * (owner: nobody, expiry: now + `reclaimAfterMs`), at most `limit` leases per call. Returns the
   * reaped run ids, so the caller enqueues a `resume` for each. Leases of workers that never
   * registered are left to expire.
   */
  reapDead(limit: number, reclaimAfterMs: number): Promise<string[]>;
  /**
   * Registered worker ids whose presence connection is alive. It reads every worker's presence
   * (O(fleet) on the server), so a fleet does not call it from every worker every period: the
   * holder of the {@link MEMBERSHIP_TURN} turn lists the workers and publishes the list
   * ({@link publishMembership}), and the others read that ({@link readMembership}).
   */
  live(): Promise<string[]>;
  /**
   * Publishes the fleet's member list for every worker to read cheaply ({@link readMembership}):
   * called by the holder of the {@link MEMBERSHIP_TURN} turn with what {@link live} just
   * returned. The record's generation moves exactly when `members`, as a set (order and repeats
   * do not count), differ from the set published last; publishing the same set again changes
   * nothing and returns the same generation. A generation is never reused, not even after the
   * record was lost (a Redis restarted empty): each new one is above the last and at least the
   * store's clock in ms. Returns the generation now published.
   */
  publishMembership(members: readonly string[]): Promise<number>;
  /**
   * The published member list ({@link publishMembership}) in one cheap read of one key or row,
   * whatever the fleet's size: its generation (0 when none was ever published), the members
   * (sorted, no repeats) only when that generation differs from `knownGeneration`, and whether
   * the turn of the scan named `turn` is free (nobody holds it, or it ran out). A free turn means
   * the publisher stopped renewing it (died, stopped, or stalled): the reader should take the turn
   * ({@link takeScanTurn}) and publish itself, so the list keeps following the fleet.
   */
  readMembership(knownGeneration: number, turn: string): Promise<PublishedMembership>;
  /**
   * Takes the turn of the fleet-wide scan named `scan` (the worker's: `dead-workers`,
   * `expired-leases`) for `turnMs` on the store's clock. `held` is true when the turn was free,
   * had run out, or was already `workerId`'s (which renews it); false while another worker holds
   * it. A scan that reads the whole fleet (as {@link reapDead} does) is run by the turn's
   * holder only, so its cost per period is that of one scan instead of growing with the fleet's
   * square. A holder registered with {@link register} holds its turn only while its presence
   * lasts: once that is gone (the process died), the next ask takes the turn at once instead of
   * when it runs out, which would add up to `turnMs` to finding the dead worker when the victim
   * held the dead-worker scan. The check must be O(1) on the store, since it comes with refused
   * asks; a wrong "gone" costs one scan run twice, which scans allow. Deliberately left out:
   * fairness (a holder may keep renewing its turn) and any promise that a turn is used: a holder
   * that stalls, or one that never registered, lets its turn run out, and another worker takes
   * the next.
   */
  takeScanTurn(scan: string, workerId: string, turnMs: number): Promise<ScanTurn>;
  /**
   * Optional: calls `listener` whenever a new member list may have been published
   * ({@link publishMembership}) since the last call: told by the store (a notification on the
   * presence session of `workerId`, which must be registered), and once each time that channel
   * (re)connects, since a change may have been missed while it was down. Calls may be spurious;
   * none is lost while the channel is up. A worker whose store has it reads the published list
   * when told, and polls only now and then (to find a free turn: a publisher that died), so the
   * reads the store serves per period stay about the same at any fleet size. Returns a function
   * that stops the calls.
   */
  watchMembership?(workerId: string, listener: () => void): () => void;
}

/**
 * The name of the scan turn whose holder lists the live workers and publishes them
 * ({@link PresenceStore.publishMembership}); every other worker reads the published list
 * ({@link PresenceStore.readMembership}).
 */
export const MEMBERSHIP_TURN = 'membership';

/** The answer of {@link PresenceStore.readMembership}. */
export interface PublishedMembership {
  /** The published list's generation; 0 when none was ever published. */
  generation: number;
  /** The members, sorted, when `generation` differs from the reader's; otherwise left out. */
  members?: string[];
  /** True when nobody holds the turn the reader named (or it ran out): the reader should take it. */
  turnFree: boolean;
}

/** The answer of {@link PresenceStore.takeScanTurn}. */
export interface ScanTurn {
  /** True when the asker holds the turn now. */
  held: boolean;
  /**
   * The workers the store knows of (registered, or with a recent fleet report), as it counts them
   * cheaply: how many may be asking.
   * A worker that was refused asks again less often in a larger fleet, so the asks the store serves
   * per turn stay about the same at any size.
   */
  workers: number;
}

// ---------------------------------------------------------------------------------------------
// Retention

/** The statuses of a finished run: the only ones retention may ever delete (run-record.ts). */
export { FINISHED_RUN_STATUSES } from './run-record.js';

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

// ---------------------------------------------------------------------------------------------
// Large payloads (claim check)

/**
 * Large payloads stored by reference (docs/large-payloads.md): a value above the claim-check
 * threshold is kept here, and the journal entry, checkpoint or message carries its SHA-256 instead.
 * Payloads are scoped by run, so retention deletes them with the run; the key is the hex SHA-256
 * of the stored bytes, so writing the same payload twice keeps one copy.
 *
 * Every store implements it (the default location); `NatsObjectPayloadStore` is the opt-in
 * alternative on NATS.
 */
export interface PayloadStore {
  /** Where payloads are kept, for errors and logs, e.g. `redis`, `postgres`, `nats-object-store`. */
  readonly location: string;
  /** Stores `data` as the run's payload `sha256`. Idempotent. */
  put(runId: string, sha256: string, data: Uint8Array): Promise<void>;
  /** The payload, or undefined when the run has none under that hash (deleted, or never written). */
  get(runId: string, sha256: string): Promise<Uint8Array | undefined>;
  /**
   * Deletes every payload of these runs (retention and `client.runs.delete`, after the run is gone).
   * A store's own {@link RetentionStore.delete} deletes its payloads atomically with the run;
   * this is for payload stores apart from the store, and for payloads written before a run was
   * created (the input of a start message no worker took).
   */
  delete(runIds: readonly string[]): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Data loss

/** What a store found when it noticed that it lost its data (see {@link Store.onDataLoss}). */
export interface StoreDataLoss {
  /** The store's name (`redis`). */
  store: string;
  /** What was found and how, for the log: which marker is gone, which server instance answers now. */
  reason: string;
}

/** A data loss the store recorded when it found it ({@link Store.lastDataLoss}). */
export interface RecordedDataLoss extends StoreDataLoss {
  /** When it was found, on the finder's clock (ms since the epoch). */
  at: number;
}

/**
 * A store adapter: Redis, Postgres, or in-memory, as one object per capability
 * (`store.leases.acquire(…)`, `store.runs.get(…)`), so an adapter composes its capability modules
 * and applies its rules (lifecycle, error mapping) once per capability instead of per method.
 * Presence is optional ({@link PresenceStore}).
 */
export interface Store extends Adapter {
  /** Exclusive, expiring ownership of runs with a fencing epoch; suspension; reaping; the store's clock. */
  readonly leases: LeaseStore;
  /** Cancel, pause and resume of a run. */
  readonly control: RunControlStore;
  /** Fenced snapshots of a run, with history. */
  readonly checkpoints: CheckpointStore;
  /** Run records, idempotency keys and outcomes; listing and counting them (contracts/run-queries.ts). */
  readonly runs: RunIndex & RunQueries;
  /** Due timers of suspended runs. */
  readonly timers: TimerStore;
  /** Signals delivered to a run, kept until retention. */
  readonly signals: SignalInbox;
  /**
   * Optional: which workers are alive, bound to their store connections. A store has all of it or
   * none (the in-memory one); without it a crashed worker's runs are found by lease expiry alone.
   */
  readonly presence?: PresenceStore;
  /** Finished runs past their time to live, and deleting one. */
  readonly retention: RetentionStore;
  /** Large payloads by reference (claim check); every store keeps them, scoped by run. */
  readonly payloads: PayloadStore;
  /** The live workers' reports, for operators (contracts/fleet.ts). */
  readonly fleet: FleetStore;
  /** Schedules, fired with compare-and-set (contracts/schedules.ts). */
  readonly schedules: ScheduleStore;
  /** Slots per concurrency key, in arrival order (contracts/concurrency.ts). */
  readonly concurrency: ConcurrencyStore;
  /** Grants per named limit and key, in a sliding window (contracts/rate-limits.ts). */
  readonly rateLimits: RateLimitStore;
  /**
   * Optional: calls `listener` whenever the store finds it lost its data while this process was
   * connected (a Redis without persistence restarted empty). Such a store keeps working, empty:
   * every run it held is gone. Stores whose data survives a restart (Postgres) leave it out.
   */
  onDataLoss?(listener: (loss: StoreDataLoss) => void): void;
  /**
   * Optional, with {@link onDataLoss}: the last data loss any process found, recorded in the data
   * kept since, so a client that was not connected then can tell a run the store lost from one
   * that never existed. Undefined when none was found (a loss while no process was connected is
   * found by nobody).
   */
  lastDataLoss?(): Promise<RecordedDataLoss | undefined>;
  /**
   * Each run's pointers into group records, for group commit across runs
   * (contracts/group-journal.ts). Optional: a store without it serves per-run journals only.
   */
  readonly journalIndex?: JournalIndex;
}
