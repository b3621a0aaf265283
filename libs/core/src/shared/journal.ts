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

/** A recorded non-deterministic value: ctx.now(), ctx.random(), ctx.uuid(). */
export interface ValueRecordedEntry extends EntryBase {
  type: 'ValueRecorded';
  seq: number;
  name: 'now' | 'random' | 'uuid';
  value: number | string;
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
