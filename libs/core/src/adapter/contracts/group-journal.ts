/**
 * Group commit across runs: the two capabilities it needs, one of the bus and one of the store.
 *
 * A worker puts the entries that many of its runs append at about the same time into one record
 * of a log of its own (a group record), then records in the store, for each of those runs, where
 * its entries went (a pointer). The bus keeps the bytes; the store keeps each run's order and
 * fences it, as the bus's expected last sequence does for a journal of one run per subject:
 *
 * - {@link GroupLog} (bus): append a record to a named log, read records by position, trim a log.
 * - {@link JournalIndex} (store): append pointers for many runs in one call, each at the position
 *   its writer expected or refused; read a run's pointers; delete them.
 *
 * A run's entries in a group record whose pointer was refused (its lease moved on, so its expected
 * position is no longer the last) are named by no pointer, and are never read back: fencing holds
 * without the bus refusing anything.
 *
 * Positions. A pointer's position is {@link GROUP_POSITION_BASE} plus the run's pointer count, so
 * it is above every position a per-run journal gives (a stream sequence, a Kafka offset + 1).
 *
 * Which runs are grouped. A run is grouped from its first append when that append expects an
 * empty journal (a new run's first owner) and reaches the store before anything else of the run;
 * every other run stays journaled on its own for its whole life. An append without an expected
 * position (a fence marker) to a run with no pointers marks the run as journaled on its own, so a
 * first owner that wakes up late cannot start pointers behind a newer owner's marker: its append is
 * answered `not-grouped` and goes to the run's own journal, where the bus refuses or the replay
 * ignores it as for any run journaled on its own. Runs therefore never move between the two, and
 * both modes of worker can resume both kinds of run.
 *
 * Retention. A group record may be removed once no run the store still has names it: the store
 * knows, per log, the lowest record a pointer of a run it keeps names ({@link GroupLogUse}), and
 * deleting a run (its pointers) releases what it named. A run's journal is kept as long as the run
 * is, as a journal of its own is: history, fork and retry of a finished run read it.
 *
 * Left out on purpose: what a group record holds (the writer's format, group-records.ts in the
 * worker) and when the trim runs (the worker's maintenance, runtime/group-log-trim.ts).
 */

import { ConfigError } from '../../shared/errors.js';

/** What a group log may be called: the same on every bus (a NATS subject token, a Kafka key). */
export const GROUP_LOG_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Refuses a log name the contract does not allow, naming it (adapters call it first). */
export function checkGroupLogName(log: string): void {
  if (!GROUP_LOG_NAME.test(log)) {
    throw new ConfigError(`group log name '${log}' is not allowed: use 1 to 64 letters, digits, '-' or '_'`);
  }
}

/** Positions above this are pointer positions (2^50: above any stream sequence or offset in use). */
export const GROUP_POSITION_BASE = 2 ** 50;

/** True when `position` is a pointer position rather than a per-run journal's. */
export function isGroupPosition(position: number): boolean {
  return position > GROUP_POSITION_BASE;
}

/** The bus's part: logs of group records, one per writer. */
export interface GroupLog {
  /**
   * Appends one record to `log` (a name of letters, digits, `-` and `_`, at most 64 characters);
   * resolves with its position in that log (strictly increasing within the log) once durable. A
   * retry of an append whose acknowledgement was lost must not store it twice.
   */
  appendGroupRecord(log: string, data: Uint8Array): Promise<number>;
  /** The records of `log` at these positions; a position whose record is gone is not in the map. */
  readGroupRecords(log: string, positions: readonly number[]): Promise<Map<number, Uint8Array>>;
  /** Removes every record of `log` before `position`; a log with no such record is fine. */
  trimGroupLog(log: string, beforePosition: number): Promise<void>;
  /**
   * The largest record the bus takes now, room for its headers left aside (a server's
   * max_payload, a producer's message size); undefined when it sets none or is not connected. The
   * committer keeps its records within it, so a flush never fails for its size: one part larger
   * than it goes alone, and only its run's append is refused.
   */
  maxRecordBytes?(): number | undefined;
}

/** One run's pointer to append: its entries are in record `record` of group log `log`. */
export interface PointerAppend {
  runId: string;
  /**
   * The position its writer believes is the run's last, as {@link JournalAppend.expectedLastPosition}:
   * 0 for a new run's first append, else a pointer position. Omitted (a fence marker): the pointer
   * goes after whatever is last, if the run is grouped.
   */
  expectedLastPosition?: number;
  /**
   * The pointer at `expectedLastPosition` as this writer appended or read it, when it knows it: a
   * hint a store may check by value instead of by count (a run's pointers never repeat, so the
   * run's last pointer is still this one exactly when nobody appended after it). A store may
   * ignore it; given, it must be the pointer at `expectedLastPosition`.
   */
  expectedLastPointer?: { log: string; record: number };
  log: string;
  record: number;
}

/** What became of one {@link PointerAppend}. */
export type PointerAppendResult =
  /** Recorded at this position. */
  | { status: 'appended'; position: number }
  /** Refused: the run's last position is `lastPosition`, not the expected one (another writer came after). */
  | { status: 'conflict'; lastPosition: number }
  /**
   * Not recorded: the run is journaled on its own (see "Which runs are grouped"): it had no
   * pointers and the append was a fence marker (the run is now marked so), or expected a position
   * of its own journal, or the run was marked before. The caller appends to the run's own journal.
   */
  | { status: 'not-grouped' };

/** Where one record of a run's journal is. */
export interface JournalPointer {
  position: number;
  log: string;
  record: number;
}

/** A run's pointers in a range. */
export interface RunPointers {
  /** True when the run is grouped: its journal is its pointers. False: it is journaled on its own. */
  grouped: boolean;
  /** The pointers asked for, in position order (none when not grouped). */
  pointers: JournalPointer[];
}

/** What the store knows of one group log, so that retention can trim it ({@link JournalIndex.groupLogUse}). */
export interface GroupLogUse {
  log: string;
  /** The lowest record that a pointer of a run the store still has names; absent when none does. */
  oldestNeeded?: number;
  /** The highest record a pointer into this log was accepted for since the store last forgot the log. */
  newestRecorded: number;
}

/** The store's part: each run's pointers, in order, fenced by expected position. */
export interface JournalIndex {
  /**
   * Whether a worker left to its default journals new runs through group records with this store:
   * true where a pointer call costs less than the per-run journal it saves (an in-memory script),
   * false where it costs more than it saves on one run's latency (a SQL function per flush). Either
   * way a worker told `journal: 'group'` groups, and every worker reads both kinds.
   */
  readonly groupsByDefault: boolean;
  /**
   * Appends every pointer in one call (one round trip); each run's append is atomic on its own
   * and independent of the others'. Results come in the order of `appends`. Two appends of one
   * run in one call are applied in order.
   */
  appendPointers(appends: readonly PointerAppend[]): Promise<PointerAppendResult[]>;
  /**
   * A fence marker's cheap path for a worker in mode per-run: marks a run with no pointers as
   * journaled on its own, as a marker through {@link appendPointers} would, and answers `own`; a
   * run with pointers is left as it is and answered `grouped` (its marker then goes through
   * appendPointers). One store call, no group record.
   */
  markOwnJournal(runId: string): Promise<'own' | 'grouped'>;
  /** The run's pointers with `afterPosition < position <= uptoPosition` (no upper bound when omitted). */
  readPointers(runId: string, afterPosition: number, uptoPosition?: number): Promise<RunPointers>;
  /** Forgets every pointer of the run, and that it was marked as journaled on its own; a run with none is fine. */
  deletePointers(runId: string): Promise<void>;
  /**
   * Every group log the store has accepted a pointer into and not forgotten since, with the lowest
   * record a pointer of a run it still has names. Records of a log below `oldestNeeded` (below
   * `newestRecorded + 1` when none is named) are needed by no run: retention may trim them. Deleting
   * a run (deletePointers, the store's delete of a finished run, the retention batch) releases what
   * its pointers named, in the same atomic step as the rest of the run.
   */
  groupLogUse(): Promise<GroupLogUse[]>;
  /**
   * Forgets `log` when no pointer names a record of it and its newest recorded record is still
   * `newestRecorded` (no pointer into it was accepted since {@link groupLogUse} read it); answers
   * whether it forgot it. A pointer accepted later makes the log known again.
   */
  forgetGroupLog(log: string, newestRecorded: number): Promise<boolean>;
}
