/**
 * Group commit across runs: a worker's journal, as its runs see it (and the client's, which reads
 * and forks them), over a log of group records on
 * the bus and each run's pointers in the store (contracts/group-journal.ts). {@link withGroupJournal}
 * gives the worker a transport whose journal is this one; everything else is the bus's own.
 *
 * Write path. Every run's append goes to one committer per worker. While a flush is in flight,
 * the appends of every run wait; the next flush takes them all (no timer: a lone run pays nothing
 * to wait for others): one group record on the worker's own log, then one store call that appends
 * each run's pointer at the position its writer expected. An append resolves once both are
 * acknowledged. A pointer refused because the run's last position moved (its lease went to
 * another worker, who appended its fence marker) is a JournalConflictError for that run alone, and
 * its part of the record is named by no pointer, so it is never read back.
 *
 * Read path. A run's pointers come from the store; the records they name are fetched from the bus,
 * shared between runs read at about the same time (a dead worker's runs resume together and read
 * the same records) through a small cache of decoded records.
 *
 * Which runs are grouped (contracts/group-journal.ts): a new run whose first append expects an
 * empty journal, in mode `group`. Every other run (journaled on its own before the fleet used group
 * commit, or started in mode `per-run`) stays on its own journal for its whole life, so workers of
 * either mode resume runs of either kind, and a rollout in either direction strands nothing.
 *
 * Invariants:
 * 1. A run has at most one part in a group record: its second append waits for the next flush.
 * 2. Nothing is retried here: the bus's append retries a lost acknowledgement itself, and a failed
 *    flush fails every append in it (their runs resume elsewhere; the record, if it landed, is
 *    named by no pointer).
 * 3. A record is read back only through a pointer the store accepted.
 */
import { JournalConflictError } from '../adapter/errors.js';
import { BatonError } from '../shared/errors.js';
import {
  isGroupPosition,
  type GroupLog,
  type JournalIndex,
  type JournalPointer,
  type PointerAppendResult,
} from '../adapter/contracts/group-journal.js';
import type { Store } from '../adapter/contracts/store.js';
import type { JournalAppend, JournalLog, JournalRecord, Transport } from '../adapter/contracts/transport.js';
import { decodeGroupRecord, encodeGroupRecord, partSize } from './group-records.js';

/** How the worker journals runs that have no pointers yet. */
export type JournalMode = 'group' | 'per-run';

export interface GroupJournalOptions {
  /** `group`: new runs, and runs journaled per run, move to pointers at their next append. */
  mode: JournalMode;
  /** This worker's group log (letters, digits, `-`, `_`; at most 64). */
  log: string;
  /** Bytes at most in one group record, parts' headers included; a larger single part goes alone. */
  maxRecordBytes?: number;
  /** Parts at most in one group record (one store call per record appends this many pointers). */
  maxParts?: number;
  /** Decoded records kept for reads, in bytes. */
  cacheBytes?: number;
  /**
   * Told the bytes each journal read fetched from the bus: a run's own records, or whole group
   * records (other runs' entries included, which is the cost of a grouped read).
   */
  onBusRead?: (bytes: number) => void;
  /**
   * In mode `group`, whether a new run is grouped now (the worker's fleet gate: every live worker
   * reads group journals); a new run it refuses is journaled on its own for good.
   * @defaultValue always
   */
  groupNewRuns?: () => boolean;
}

const DEFAULT_MAX_RECORD_BYTES = 256 * 1024;
const DEFAULT_MAX_PARTS = 500;
const DEFAULT_CACHE_BYTES = 16 * 1024 * 1024;

/** True when both the bus and the store can keep a group journal. */
export function supportsGroupJournal(
  transport: Transport,
  store: Store,
): transport is Transport & { groupLog: GroupLog } {
  return transport.groupLog !== undefined && store.journalIndex !== undefined;
}

/**
 * `transport` with its journal replaced by a group journal over its group log and `store`'s
 * journal index. Throws a ConfigError-like BatonError when either lacks the capability.
 */
export function withGroupJournal(
  transport: Transport,
  store: Store,
  options: GroupJournalOptions,
): Transport {
  const groupLog = transport.groupLog;
  const index = store.journalIndex;
  if (groupLog === undefined || index === undefined) {
    throw new BatonError(
      'BATON_GROUP_JOURNAL_UNSUPPORTED',
      `group commit needs a bus with group logs and a store with a journal index; ${transport.name} ` +
        `${groupLog === undefined ? 'has no group logs' : 'has them'} and ${store.name} ` +
        `${index === undefined ? 'has no journal index' : 'has one'}: set BATON_JOURNAL=per-run`,
    );
  }
  // Everything but the journal is the bus's own; connect and close reach the bus itself.
  return {
    name: transport.name,
    connect: () => transport.connect(),
    close: () => transport.close(),
    runQueue: transport.runQueue,
    journal: new GroupJournal(transport.journal, groupLog, index, options),
    deadLetters: transport.deadLetters,
    groupLog,
    ...(transport.runStreams !== undefined && { runStreams: transport.runStreams }),
  };
}

interface Pending {
  runId: string;
  expectedLastPosition: number | undefined;
  data: Uint8Array;
  size: number;
  resolve(result: PointerAppendResult): void;
  reject(err: unknown): void;
}

/** How many runs' last pointers a committer remembers (the oldest is forgotten first). */
export const REMEMBERED_POINTERS = 16_384;

/** Forgets the oldest of `runs` (insertion order) past {@link REMEMBERED_POINTERS}. */
function forgetOldest(runs: Map<string, unknown> | Set<string>): void {
  if (runs.size <= REMEMBERED_POINTERS) return;
  const oldest = runs.keys().next().value;
  if (oldest !== undefined) runs.delete(oldest);
}

/** Puts the appends of every run into group records, one flush at a time. */
export class GroupCommitter {
  private pending: Pending[] = [];
  private flushing = false;
  /**
   * The last pointer of each run this committer appended or was told of (`remember`), sent with
   * the run's next append as `expectedLastPointer` when it is the pointer that append expects, so
   * a store can check the run's last pointer by value. A miss costs the store a little more work,
   * never a wrong answer: the store checks the hint against what it holds.
   */
  private readonly lastPointers = new Map<string, JournalPointer>();
  /** Flushes so far and the parts they carried (for the bench and tests). */
  readonly stats = { records: 0, parts: 0 };

  constructor(
    private readonly groupLog: GroupLog,
    private readonly index: JournalIndex,
    private readonly log: string,
    private readonly maxRecordBytes: number,
    private readonly maxParts: number,
  ) {}

  /** Appends `data` for `runId`; resolves with what the store made of its pointer. */
  submit(
    runId: string,
    data: Uint8Array,
    expectedLastPosition: number | undefined,
  ): Promise<PointerAppendResult> {
    return new Promise((resolve, reject) => {
      const size = partSize(Buffer.byteLength(runId, 'utf8'), data.length);
      this.pending.push({ runId, expectedLastPosition, data, size, resolve, reject });
      if (!this.flushing) void this.drain();
    });
  }

  /** Notes `pointer` as the run's last (a read of its journal to the end found it last). */
  remember(runId: string, pointer: JournalPointer): void {
    this.lastPointers.delete(runId);
    this.lastPointers.set(runId, pointer);
    forgetOldest(this.lastPointers);
  }

  /** Forgets the run's last pointer (its journal is gone). */
  forget(runId: string): void {
    this.lastPointers.delete(runId);
  }

  private async drain(): Promise<void> {
    this.flushing = true;
    try {
      while (this.pending.length > 0) await this.flush(this.takeBatch());
    } finally {
      this.flushing = false;
    }
  }

  /** The oldest pending appends that fit one record, at most one per run (invariant 1). */
  private takeBatch(): Pending[] {
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    const runs = new Set<string>();
    const maxBytes = Math.min(this.maxRecordBytes, this.groupLog.maxRecordBytes?.() ?? Infinity);
    let bytes = 6;
    for (const pending of this.pending) {
      const fits = batch.length === 0 || (batch.length < this.maxParts && bytes + pending.size <= maxBytes);
      if (fits && !runs.has(pending.runId)) {
        batch.push(pending);
        runs.add(pending.runId);
        bytes += pending.size;
      } else {
        rest.push(pending);
      }
    }
    this.pending = rest;
    return batch;
  }

  private async flush(batch: Pending[]): Promise<void> {
    try {
      const record = await this.groupLog.appendGroupRecord(this.log, encodeGroupRecord(batch));
      const results = await this.index.appendPointers(
        batch.map(({ runId, expectedLastPosition }) => {
          const last = this.lastPointers.get(runId);
          return {
            runId,
            expectedLastPosition,
            ...(last !== undefined &&
              last.position === expectedLastPosition && {
                expectedLastPointer: { log: last.log, record: last.record },
              }),
            log: this.log,
            record,
          };
        }),
      );
      this.stats.records++;
      this.stats.parts += batch.length;
      batch.forEach((pending, i) => {
        const result = results[i]!;
        if (result.status === 'appended') {
          this.remember(pending.runId, { position: result.position, log: this.log, record });
        } else {
          this.forget(pending.runId);
        }
        pending.resolve(result);
      });
    } catch (err) {
      for (const pending of batch) pending.reject(err);
    }
  }
}

/**
 * Decoded group records recently read, shared by concurrent reads, bounded in bytes. The positions
 * that reads of one log miss within one turn of the event loop go to the bus as one read: the
 * resumes of a dead worker's runs, claimed together, fetch the records they share once, in one
 * request per log (on Kafka one fetch per contiguous range).
 */
class RecordCache {
  private readonly entries = new Map<string, Promise<Map<string, Uint8Array> | undefined>>();
  private readonly sizes = new Map<string, number>();
  private bytes = 0;
  /** Positions missed per log since the last batch left, read together at the next turn. */
  private readonly batches = new Map<
    string,
    { positions: number[]; read: Promise<Map<number, Uint8Array>> }
  >();
  /** What reads fetched from the bus (for the bench and tests). */
  readonly stats = { reads: 0, records: 0, bytes: 0 };

  constructor(
    private readonly groupLog: GroupLog,
    private readonly maxBytes: number,
    private readonly onBusRead: ((bytes: number) => void) | undefined,
  ) {}

  /** The decoded records of `log` at `positions` (absent when gone), fetching what is not cached in one read. */
  async get(
    log: string,
    positions: readonly number[],
  ): Promise<Map<number, Map<string, Uint8Array> | undefined>> {
    for (const position of positions) {
      const k = key(log, position);
      if (this.entries.has(k)) continue;
      const decoded = this.batchRead(log, position).then((records) => {
        const data = records.get(position);
        if (data === undefined) return undefined;
        this.account(k, data.length);
        return decodeGroupRecord(data, `group record ${position} of log ${log}`);
      });
      // A failed read is not kept: the next reader asks again.
      decoded.catch(() => this.forget(k));
      this.entries.set(k, decoded);
    }
    const out = new Map<number, Map<string, Uint8Array> | undefined>();
    for (const position of positions) out.set(position, await this.entries.get(key(log, position)));
    return out;
  }

  /** The bus's answer for `position`, read with every other position of `log` missed this turn. */
  private batchRead(log: string, position: number): Promise<Map<number, Uint8Array>> {
    const open = this.batches.get(log);
    if (open !== undefined) {
      open.positions.push(position);
      return open.read;
    }
    const positions = [position];
    const read = new Promise<Map<number, Uint8Array>>((resolve, reject) => {
      setImmediate(() => {
        this.batches.delete(log);
        this.stats.reads++;
        this.groupLog.readGroupRecords(log, positions).then((records) => {
          this.stats.records += records.size;
          let bytes = 0;
          for (const data of records.values()) bytes += data.length;
          this.stats.bytes += bytes;
          this.onBusRead?.(bytes);
          resolve(records);
        }, reject);
      });
    });
    this.batches.set(log, { positions, read });
    return read;
  }

  private account(k: string, size: number): void {
    this.sizes.set(k, size);
    this.bytes += size;
    // Oldest first (a Map keeps insertion order), never the entry just added.
    for (const old of this.entries.keys()) {
      if (this.bytes <= this.maxBytes || old === k) break;
      this.forget(old);
    }
  }

  private forget(k: string): void {
    this.entries.delete(k);
    this.bytes -= this.sizes.get(k) ?? 0;
    this.sizes.delete(k);
  }
}

function key(log: string, position: number): string {
  return `${log}\u0000${position}`;
}

/** A group record a pointer names that the bus no longer has: the run's journal has a hole. */
export class GroupRecordMissingError extends BatonError {
  constructor(runId: string, pointer: JournalPointer) {
    super(
      'BATON_GROUP_RECORD_MISSING',
      `run ${runId}: its journal entry at position ${pointer.position} is in group record ` +
        `${pointer.record} of log ${pointer.log}, which the bus no longer has (removed by the bus's ` +
        `retention or by hand); the run cannot be replayed past its newest checkpoint before it`,
    );
  }
}

/** A worker's journal: group records for its grouped runs, the bus's own journal (`own`) for the others. */
class GroupJournal implements JournalLog {
  readonly supportsOptimisticAppend: boolean;
  readonly scansSharedLog: boolean | undefined;
  readonly purgeMode: JournalLog['purgeMode'];
  private readonly committer: GroupCommitter;
  private readonly cache: RecordCache;
  /**
   * Runs the store answered `own` for a fence marker in mode per-run (oldest forgotten first, at
   * most {@link REMEMBERED_POINTERS}). A run journaled on its own stays so while its journal exists,
   * so its next fence markers go to its own journal without asking the store again: on a bus whose
   * journal takes no expected position (Kafka), every append of a run is a fence marker, and
   * asking each time cost the store a call per step. A read that finds the run grouped, or a purge
   * of its journal, forgets it.
   */
  private readonly ownRuns = new Set<string>();

  constructor(
    private readonly own: JournalLog,
    groupLog: GroupLog,
    private readonly index: JournalIndex,
    private readonly options: GroupJournalOptions,
  ) {
    // A new run's pointers are fenced by the store in mode group, and read without scanning.
    this.supportsOptimisticAppend = options.mode === 'group' || own.supportsOptimisticAppend;
    this.scansSharedLog = options.mode === 'group' ? false : own.scansSharedLog;
    this.purgeMode = own.purgeMode;
    this.committer = new GroupCommitter(
      groupLog,
      index,
      options.log,
      options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES,
      options.maxParts ?? DEFAULT_MAX_PARTS,
    );
    this.cache = new RecordCache(groupLog, options.cacheBytes ?? DEFAULT_CACHE_BYTES, options.onBusRead);
  }

  async append(append: JournalAppend): Promise<number> {
    const expected = append.expectedLastPosition;
    // A writer that expects a position of the run's own journal, or a new run in mode per-run, goes
    // there straight away: such a run is never grouped later (see the module doc).
    const ownJournal =
      expected !== undefined &&
      !isGroupPosition(expected) &&
      (expected > 0 || this.options.mode === 'per-run' || this.options.groupNewRuns?.() === false);
    if (ownJournal) return this.own.append(append);
    // A fence marker in mode per-run asks the store first: most such runs are their own, and
    // their marker then costs one store call instead of a group record and a store call.
    if (expected === undefined && this.options.mode === 'per-run') {
      if (this.ownRuns.has(append.runId)) return this.own.append(append);
      if ((await this.index.markOwnJournal(append.runId)) === 'own') {
        this.ownRuns.add(append.runId);
        forgetOldest(this.ownRuns);
        return this.own.append(append);
      }
    }
    const result = await this.committer.submit(append.runId, append.data, expected);
    switch (result.status) {
      case 'appended':
        return result.position;
      case 'conflict':
        throw new JournalConflictError(append.runId, expected ?? 0, result.lastPosition);
      case 'not-grouped':
        // The run is journaled on its own: the append goes there, and the bus checks `expected`.
        return this.own.append(append);
    }
  }

  async read(runId: string, afterPosition: number, uptoPosition?: number): Promise<JournalRecord[]> {
    const { grouped, pointers } = await this.index.readPointers(runId, afterPosition, uptoPosition);
    if (!grouped) {
      const records = await this.own.read(runId, afterPosition, uptoPosition);
      if (this.options.onBusRead !== undefined) {
        let bytes = 0;
        for (const record of records) bytes += record.data.byteLength;
        this.options.onBusRead(bytes);
      }
      return records;
    }
    this.ownRuns.delete(runId);
    // Read to the end: the last pointer is the run's last, the one its next append expects.
    const last = pointers.at(-1);
    if (uptoPosition === undefined && last !== undefined) this.committer.remember(runId, last);
    return this.resolve(runId, pointers);
  }

  async purge(runId: string): Promise<void> {
    this.committer.forget(runId);
    this.ownRuns.delete(runId);
    await this.index.deletePointers(runId);
    await this.own.purge(runId);
  }

  /** The records `pointers` name, in their order; one read per log for what is not cached. */
  private async resolve(runId: string, pointers: readonly JournalPointer[]): Promise<JournalRecord[]> {
    const byLog = new Map<string, number[]>();
    for (const p of pointers) byLog.set(p.log, [...(byLog.get(p.log) ?? []), p.record]);
    const decoded = new Map<string, Map<number, Map<string, Uint8Array> | undefined>>();
    await Promise.all(
      [...byLog].map(async ([log, records]) =>
        decoded.set(log, await this.cache.get(log, [...new Set(records)])),
      ),
    );
    return pointers.map((pointer) => {
      const data = decoded.get(pointer.log)?.get(pointer.record)?.get(runId);
      if (data === undefined) throw new GroupRecordMissingError(runId, pointer);
      return { position: pointer.position, data: new Uint8Array(data) };
    });
  }
}
