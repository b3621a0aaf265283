/** What the replay executor is given and what it gives back: the host it runs on, its options, outcomes. */
import type { SuspendResult } from '../../adapter/contracts/leases.js';
import type { InboxSignal } from '../../adapter/contracts/waits.js';
import type { KeptUpdate, UpdateRequest } from '../../adapter/contracts/updates.js';
import type { RateLimitAnswer, RateLimitRequest } from '../../adapter/contracts/rate-limits.js';
import { serializeError, type SerializedError } from '../../shared/errors.js';
import { CancelledError } from '../../author/errors.js';
import { NonDeterminismError } from '../errors.js';
import type { HistoryInfo, JournalEntry } from '../../shared/journal.js';
import type { AnyWorkflowDefinition } from '../../author/workflow.js';
import type { PromiseDelivery } from '../../author/promise.js';
import type { AttributeChanges } from '../../shared/attributes.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An entry as the executor builds it; the host stamps `epoch` and `at`. */
export type NewEntry = DistributiveOmit<JournalEntry, 'epoch' | 'at'>;

/** A signal a wait's schema refused (pending-waits.ts): reported once per execution. */
export interface RefusedSignal {
  name: string;
  signalId: string;
  /** The wait's step. */
  seq: number;
  /** Each problem as `$.path: message`. */
  issues: string[];
}

/** What the executor needs from the worker: durable appends, the inbox, suspension, a clock. */
export interface ExecutionHost {
  readonly runId: string;
  /** Appends durably, in call order; rejects when fenced or the transport fails. */
  append(entries: NewEntry[], options?: AppendOptions): Promise<void>;
  /** Wall clock for live values and timer deadlines. */
  clock(): number;
  /**
   * The run's history as durable now (history-info.ts): its effective entries, their encoded bytes,
   * and whether a soft limit is reached. Read by a live `ctx.historyInfo()`, which journals it.
   * Absent (a host that writes nothing): the executor counts the entries it knows and no bytes.
   */
  historyInfo?(): HistoryInfo;
  readSignals(): Promise<InboxSignal[]>;
  /** Releases the run until `wakeAt` or one of `signals` arrives (see LeaseStore.suspend). */
  suspend(request: {
    wakeAt: number | null;
    signals: string[];
    consumedSignalIds: string[];
  }): Promise<SuspendResult>;
  heartbeat?(seq: number, details: unknown): void;
  /**
   * A payload a signal wait's schema refused (pending-waits.ts): the wait skips it and goes on.
   * Called once per execution per signal; the host warns, naming the signal, the run and the
   * issues. Absent: refused silently (still skipped).
   */
  signalRefused?(refusal: RefusedSignal): void;
  /**
   * Asks the store for a place under a rate limit (RateLimitStore.take), before every live
   * attempt of a rate-limited activity. Absent on hosts that run no activity (a replay check): such
   * a step then fails the run with ConfigError rather than running unlimited.
   */
  takeRateToken?(request: RateLimitRequest): Promise<RateLimitAnswer>;
  /**
   * Gives the run's worker slot back while the run waits in process for a rate limit, so the
   * worker may run another run meanwhile. Returns the function that takes a slot back (resolving
   * once it has one), or undefined when the worker lends no more slots: the run then suspends
   * instead. Absent: the run waits holding its slot.
   */
  lendSlot?(): (() => Promise<void>) | undefined;
  /**
   * Called before an activity attempt starts (the moment a side effect may begin). Throws, after
   * stopping the run, when the run may not start one: its lease is no longer known to be valid, as
   * after the process was frozen past its lease. A step a newer owner may already have completed is
   * then never run again by this one.
   */
  assertMayStartActivity?(): void;
  /**
   * Sends the start of a child run (`ctx.startChild`): idempotent, since the run id and key derive
   * from the parent's step. Absent on hosts that start nothing (a replay check): the step fails.
   */
  startChild?(request: ChildStartRequest): Promise<void>;
  /**
   * The run's update requests not settled yet (UpdateStore.pending), in arrival order, their
   * arguments opened. Absent on hosts that take no update (a replay check): requests are not read.
   */
  readUpdates?(): Promise<UpdateRequest[]>;
  /**
   * Keeps an update's outcome (UpdateStore.settle under the run's epoch); rejects when the lease
   * moved on. Absent on hosts that keep nothing (a replay check).
   */
  settleUpdate?(settlement: Omit<KeptUpdate, 'settledAt'>): Promise<void>;
  /**
   * Records a durable promise the run made (`ctx.promise`) in the store (PromiseStore.create), so
   * its token can be completed; called again for a promise a resume finds open (a crash may have
   * come between the journal entry and the record), which changes nothing when it is there.
   * Absent on hosts that run nothing (a replay check): nothing is recorded.
   */
  createPromise?(promise: NewPromise): Promise<void>;
  /**
   * Closes a promise whose timeout ran out (PromiseStore.expire) and answers its completion when
   * one came first (opened, as the inbox's are), else undefined: the promise timed out. Absent:
   * a promise past its deadline times out.
   */
  expirePromise?(token: string): Promise<PromiseDelivery | undefined>;
  /**
   * Writes the run's search attributes to the store (`store.attributes.set`, fenced by the run's
   * epoch), before the step's AttributesSet entry is journaled (`ctx.setAttributes`). A rejection
   * stops the run, as a failed append does. Absent on hosts that write nothing: the step then
   * fails the run (a replay check answers with its own stop instead).
   */
  setAttributes?(changes: AttributeChanges): Promise<void>;
  /**
   * Wraps every attempt of an activity (tracing, timing). Must call `attempt` once and return its
   * result or rethrow its error unchanged.
   */
  aroundActivityAttempt?<T>(info: ActivityAttemptInfo, attempt: () => Promise<T>): Promise<T>;
  /**
   * Appends to the run stream `stream` (docs/streams.md): resolves once durable, or at once for a
   * workflow write the stream already holds (a replay's). `bytes` is the value's JSON length. A
   * workflow write (`ordinal` set) never rejects: a failure is the host's to act on (it stops the
   * run). Absent on hosts that write nothing (a replay check): workflow writes do nothing and an
   * activity's writes reject.
   */
  streamWrite?(stream: string, write: StreamWrite, bytes: number): Promise<void>;
}

/** One write to a run stream ({@link ExecutionHost.streamWrite}). */
export interface StreamWrite {
  kind: 'chunk' | 'close';
  value?: unknown;
  /** The workflow write's number in this stream, 1, 2, 3… in the workflow's order; absent for an activity's. */
  ordinal?: number;
  /** The writing activity's step and attempt. */
  step?: number;
  attempt?: number;
}

/** A durable promise to record ({@link ExecutionHost.createPromise}). */
export interface NewPromise {
  token: string;
  /** The step of `ctx.promise`. */
  seq: number;
  /** The deadline (store clock), or null. */
  timeoutAt: number | null;
  /** The JSON Schema completions are checked against (author/promise.ts, invariant 6). */
  schema?: Record<string, unknown>;
}

/** A child run to start (core's child-workflows.ts, invariant 1). */
export interface ChildStartRequest {
  runId: string;
  workflow: string;
  version: number;
  input: unknown;
  idempotencyKey: string;
}

/** What an append may say besides its entries. */
export interface AppendOptions {
  /** Checkpoint once these entries are durable. */
  checkpoint?: boolean;
  /**
   * The entries hold an activity's outcome whose step journals ActivityFailed in their place if
   * a value in them cannot be encoded: an UnencodableValueError rejects this append alone and
   * the run goes on. Without it, such an append ends the run (the host refuses every later entry
   * but RunFailed).
   */
  unencodableFailsStep?: boolean;
}

/** What `aroundActivityAttempt` learns of an attempt. */
export interface ActivityAttemptInfo {
  runId: string;
  name: string;
  seq: number;
  /** 1 for the first try; retries count up. */
  attempt: number;
  idempotencyKey: string;
}

export type ExecutionOutcome =
  | { kind: 'completed'; result: unknown }
  | { kind: 'failed'; error: SerializedError; nonDeterminism: boolean }
  | { kind: 'cancelled'; reason: string }
  | { kind: 'suspended' }
  | { kind: 'stopped'; reason: 'handoff' | 'aborted'; cause?: unknown };

export interface ExecutorOptions {
  workflow: AnyWorkflowDefinition;
  input: unknown;
  runId: string;
  /** The run's effective journal (fenced entries already dropped). */
  history: readonly JournalEntry[];
  host: ExecutionHost;
  /** Waits shorter than this are slept in process instead of suspending. @defaultValue 1000 */
  inProcessWaitMs?: number;
  /** The lease said a cancel is pending. */
  cancelRequested?: boolean;
  /** The pending cancel's reason (`client.cancel(id, reason)`), when the store kept one. */
  cancelReason?: string;
  /**
   * The run was woken for an update request: read its requests once replayed, even when the
   * workflow registers no handler (the request is then refused as unknown, not left unanswered).
   */
  updateRequested?: boolean;
  /**
   * Pipelined steps (opt-in): an idempotent activity's result reaches the workflow before its
   * ActivityCompleted entry is durable, and the next idempotent activity starts without waiting
   * for earlier entries. The run still ends (and hands off, and suspends) only once every entry
   * is durable, a non-idempotent activity still starts only after everything before it is
   * durable, and a failed append still stops the run. `run()` may resolve with the outcome while
   * entries are still on their way: the host must journal the outcome after them, in order. What
   * it gives up: after a crash, steps whose entries were not yet durable run again, possibly with
   * inputs computed differently the second time. @defaultValue false
   */
  pipelineSteps?: boolean;
  /**
   * Replay the journal and stop at its end, writing nothing and running nothing (`replayToEnd`),
   * to answer a query of a run no worker holds from the state the journal leads to. The host's
   * append, suspend, readSignals, rate limits and child starts are never called. @defaultValue false
   */
  replayOnly?: boolean;
}

/** How the workflow function ended: its value or what it threw. */
export type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/** The outcome of a run stopped by `error` (a non-determinism or another fatal error). */
export function failedOutcome(error: Error): ExecutionOutcome {
  return {
    kind: 'failed',
    error: serializeError(error),
    nonDeterminism: error instanceof NonDeterminismError,
  };
}

/** The outcome of a workflow function that settled; a CancelledError after a cancel request is `cancelled`. */
export function settledOutcome(settled: Settled, cancelReason: string | undefined): ExecutionOutcome {
  if (settled.ok) return { kind: 'completed', result: settled.value };
  if (settled.error instanceof CancelledError && cancelReason !== undefined) {
    return { kind: 'cancelled', reason: cancelReason };
  }
  return { kind: 'failed', error: serializeError(settled.error), nonDeterminism: false };
}
