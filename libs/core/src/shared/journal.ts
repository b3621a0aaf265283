/**
 * Journal entries: the append-only history of one run, kept on the transport.
 *
 * Every entry carries the epoch of the lease it was written under. `seq` is the workflow's step
 * number: the n-th ctx call made by the workflow function (assigned at call time, so parallel
 * branches number deterministically whatever order they finish in).
 */
import type { AttributeChanges } from './attributes.js';
import type { SerializedError } from './errors.js';

/**
 * A value kept by reference (claim check, docs/large-payloads.md): the entry or message carries
 * this instead of the value, and the bytes live in the payload store under the run and `sha256`.
 */
export interface PayloadRef {
  /** Hex SHA-256 of the stored bytes: checked on every read, so a swapped payload is refused. */
  sha256: string;
  /** Stored size in bytes. */
  size: number;
  /**
   * The run the bytes were encoded for (their encryption is bound to it). A fork keeps the
   * original's refs and copies the bytes under its own id, so this may name another run.
   */
  run: string;
}

interface EntryBase {
  /** Epoch of the lease the writer held. */
  epoch: number;
  /**
   * Writer's wall clock at append. Replay takes no path decision from it; the one reader is the
   * freshness check of activities with `maxAgeMs`, for which clock skew between workers shifts
   * the age by the skew.
   */
  at: number;
}

/** The fence: written by a new owner right after acquiring the lease. */
export interface LeaseAcquiredEntry extends EntryBase {
  type: 'LeaseAcquired';
  workerId: string;
}

/** A non-idempotent activity is about to run (lets a resume tell "never started" from "in doubt"). */
export interface ActivityStartedEntry extends EntryBase {
  type: 'ActivityStarted';
  seq: number;
  name: string;
}

export interface ActivityCompletedEntry extends EntryBase {
  type: 'ActivityCompleted';
  seq: number;
  name: string;
  result: unknown;
  /** Set instead of `result` when the result was stored by reference. */
  resultRef?: PayloadRef;
  attempts: number;
  /** True when the result came from the activity's `reconcile` hook rather than a fresh execution. */
  reconciled?: boolean;
  /**
   * True when a resume found the step's earlier result older than the activity's `maxAgeMs` and
   * ran it again. The latest completion of a step wins on replay, delivered at the first one's
   * place in journal order.
   */
  refreshed?: boolean;
}

export interface ActivityFailedEntry extends EntryBase {
  type: 'ActivityFailed';
  seq: number;
  name: string;
  error: SerializedError;
  attempts: number;
  /** The failure of a freshness re-run (see {@link ActivityCompletedEntry.refreshed}). */
  refreshed?: boolean;
}

/**
 * `ctx.patched(changeId)` took the new branch while the run was executing live. The entry has no
 * `seq` on purpose: a patch check is not a step, so adding one to the code shifts no step numbers.
 * `atSeq` is the step number the next ctx call would have taken (for humans reading a history).
 */
export interface PatchMarkerEntry extends EntryBase {
  type: 'PatchMarker';
  changeId: string;
  atSeq: number;
  /** Written by `ctx.deprecatePatch`: the code no longer has the old branch. */
  deprecated?: boolean;
}

/** What `ctx.historyInfo()` returns: the run's history as journaled when it was called. */
export interface HistoryInfo {
  /** Entries in the run's effective history (its checkpoint's, then the journal's after it). */
  length: number;
  /** Their encoded size in bytes, as the journal holds them (large values by reference). */
  bytes: number;
  /** True once `length` or `bytes` reached the soft limit: continue as new at the next good point. */
  suggested: boolean;
}

/** A recorded non-deterministic value: ctx.now(), ctx.random(), ctx.uuid(), ctx.historyInfo(). */
export interface ValueRecordedEntry extends EntryBase {
  type: 'ValueRecorded';
  seq: number;
  name: 'now' | 'random' | 'uuid' | 'historyInfo';
  value: number | string | HistoryInfo;
}

/**
 * `ctx.setAttributes(...)` changed the run's search attributes (docs/search-attributes.md): written
 * after the store holds them, so a replay that finds it writes nothing again. A step of its own
 * (it takes a sequence number). Records holding one are journal codec version 3.
 */
export interface AttributesSetEntry extends EntryBase {
  type: 'AttributesSet';
  seq: number;
  /** The changes, in stored form: a new value by name, or null where one was removed. */
  attributes: AttributeChanges;
}

export interface TimerScheduledEntry extends EntryBase {
  type: 'TimerScheduled';
  seq: number;
  wakeAt: number;
}

export interface TimerFiredEntry extends EntryBase {
  type: 'TimerFired';
  seq: number;
}

export interface SignalWaitStartedEntry extends EntryBase {
  type: 'SignalWaitStarted';
  seq: number;
  name: string;
  /** Absolute deadline, or null to wait forever. */
  timeoutAt: number | null;
}

export interface SignalReceivedEntry extends EntryBase {
  type: 'SignalReceived';
  seq: number;
  name: string;
  /** The inbox id of the consumed signal: each signal is consumed by exactly one wait. */
  signalId: string;
  payload: unknown;
  /** Set instead of `payload` when the payload was stored by reference. */
  payloadRef?: PayloadRef;
}

export interface SignalTimedOutEntry extends EntryBase {
  type: 'SignalTimedOut';
  seq: number;
  name: string;
}

/**
 * An update (`client.update` → `ctx.onUpdate`) passed its schema and validators and its handler
 * starts here. No `seq`: it is not a ctx call of the workflow, and the handler's own ctx calls
 * number on from the point where it starts. Replay starts the handler again at this entry's place
 * among the completions (executor/updates.ts), so its steps take the numbers they took live. A
 * rejected update is never journaled. Records holding one are codec version 3.
 */
export interface UpdateAcceptedEntry extends EntryBase {
  type: 'UpdateAccepted';
  updateId: string;
  name: string;
  /** The arguments the handler receives (the update schema's output). */
  args: unknown;
  /** Set instead of `args` when the arguments were stored by reference. */
  argsRef?: PayloadRef;
}

/**
 * The handler of an accepted update settled and its outcome is kept in the store (`updates.settle`,
 * written first): with `result`, or `error` for a handler that threw. Replay delivers nothing for
 * it; it tells a resumed owner that the update needs no answer any more.
 */
export interface UpdateCompletedEntry extends EntryBase {
  type: 'UpdateCompleted';
  updateId: string;
  name: string;
  result?: unknown;
  /** Set instead of `result` when the result was stored by reference. */
  resultRef?: PayloadRef;
  /** Set when the handler threw. */
  error?: SerializedError;
}

/**
 * `ctx.promise()` made a durable promise (docs/promises.md): its token, drawn once from the
 * worker's crypto and read back from here on every replay, so the token never changes.
 */
export interface PromiseCreatedEntry extends EntryBase {
  type: 'PromiseCreated';
  seq: number;
  /** The promise's token: a secret, whoever holds it may complete the promise. */
  token: string;
  /** Absolute deadline (store clock), or null to wait forever. */
  timeoutAt: number | null;
}

/** A durable promise was completed from outside, and the run took the completion. */
export interface PromiseCompletedEntry extends EntryBase {
  type: 'PromiseCompleted';
  seq: number;
  /** `resolved`: `value` (or `valueRef`) holds the value; `rejected`: `error` says why. */
  outcome: 'resolved' | 'rejected';
  value?: unknown;
  /** Set instead of `value` when the value was stored by reference. */
  valueRef?: PayloadRef;
  error?: SerializedError;
}

/** A durable promise with a timeout was not completed in time. */
export interface PromiseTimedOutEntry extends EntryBase {
  type: 'PromiseTimedOut';
  seq: number;
}

export interface RunCompletedEntry extends EntryBase {
  type: 'RunCompleted';
  result: unknown;
  /** Set instead of `result` when the result was stored by reference. */
  resultRef?: PayloadRef;
}

export interface RunFailedEntry extends EntryBase {
  type: 'RunFailed';
  error: SerializedError;
}

export interface RunCancelledEntry extends EntryBase {
  type: 'RunCancelled';
  reason: string;
}

export type JournalEntry =
  | LeaseAcquiredEntry
  | ActivityStartedEntry
  | ActivityCompletedEntry
  | ActivityFailedEntry
  | ValueRecordedEntry
  | AttributesSetEntry
  | TimerScheduledEntry
  | TimerFiredEntry
  | SignalWaitStartedEntry
  | SignalReceivedEntry
  | SignalTimedOutEntry
  | PatchMarkerEntry
  | UpdateAcceptedEntry
  | UpdateCompletedEntry
  | PromiseCreatedEntry
  | PromiseCompletedEntry
  | PromiseTimedOutEntry
  | RunCompletedEntry
  | RunFailedEntry
  | RunCancelledEntry;

export type JournalEntryType = JournalEntry['type'];

/** Entries that belong to a step (carry `seq`). */
export type StepEntry = Extract<JournalEntry, { seq: number }>;

export const JOURNAL_ENTRY_TYPES: readonly JournalEntryType[] = [
  'LeaseAcquired',
  'ActivityStarted',
  'ActivityCompleted',
  'ActivityFailed',
  'ValueRecorded',
  'TimerScheduled',
  'TimerFired',
  'SignalWaitStarted',
  'SignalReceived',
  'SignalTimedOut',
  'PatchMarker',
  'UpdateAccepted',
  'UpdateCompleted',
  'PromiseCreated',
  'PromiseCompleted',
  'PromiseTimedOut',
  'RunCompleted',
  'RunFailed',
  'RunCancelled',
  'AttributesSet',
];

/** An entry as read back from the transport, with its position in the run's journal. */
export interface PositionedEntry {
  /** Transport-assigned, strictly increasing within a run (JetStream stream sequence, Kafka offset). */
  position: number;
  entry: JournalEntry;
}

export function isStepEntry(entry: JournalEntry): entry is StepEntry {
  return 'seq' in entry;
}

/** True for the entries of a durable promise (a journal record or checkpoint holding one is newer). */
export function isPromiseEntry(entry: JournalEntry): boolean {
  return (
    entry.type === 'PromiseCreated' || entry.type === 'PromiseCompleted' || entry.type === 'PromiseTimedOut'
  );
}

/**
 * Drops zombie writes: an entry whose epoch is below the highest LeaseAcquired epoch seen before
 * it was written by an owner that had already been fenced off, so it is ignored on replay.
 * `startEpoch` is the epoch already established by a checkpoint the entries follow.
 */
export function filterFencedEntries<T extends { entry: JournalEntry }>(
  items: readonly T[],
  startEpoch = 0,
): T[] {
  let fence = startEpoch;
  const kept: T[] = [];
  for (const item of items) {
    const { entry } = item;
    if (entry.epoch < fence) continue;
    if (entry.type === 'LeaseAcquired') fence = Math.max(fence, entry.epoch);
    kept.push(item);
  }
  return kept;
}
