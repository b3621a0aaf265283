/**
 * Appends one run's entries to the journal in call order, with the expected last position so a
 * writer that has been fenced off cannot slip an entry in; keeps the effective entry list that
 * checkpoints snapshot.
 *
 * Group commit within a run: while one record is on its way, later appends wait in a batch, and
 * the whole batch goes out as the next record. A step still waits for its own entry to be
 * durable; entries that became ready together (the results of parallel activities) share one
 * record and one round trip instead of queueing for one each.
 *
 * Invariants:
 * 1. An append never succeeds under a stale epoch on a transport with optimistic append; on one
 *    without, the entry is ignored at replay by the LeaseAcquired fence.
 * 2. With payload protection on, `head` is the hash chain head over `entries`: both change
 *    together, only after an append succeeded, so every checkpoint records the head of exactly
 *    the entries it holds. Without protection (`protection` undefined) nothing is linked, encoded
 *    beyond encodeEntries, sealed or signed: the hot path is today's.
 * 3. With the claim check on, `entries` (and so every checkpoint) hold references in place of
 *    large values, exactly as the journal does; the bytes are durable before the record is sent.
 * 4. An append refused for its value (PayloadTooLargeError, UnencodableValueError) wrote nothing,
 *    so it does not stop the writer; an append batched with it still lands on its own. Unless its
 *    caller replaces it (`unencodableFailsStep`: the step journals ActivityFailed instead), it
 *    blocks every later append but the run's RunFailed: no later step and no RunCompleted may be
 *    journaled without it (with pipelined steps the workflow may have seen the value already).
 * 5. A `leadEntry` (a first owner's LeaseAcquired, recovery.ts) goes out at the head of the first
 *    record that lands, and only there: it joins `entries` with that record, never on its own.
 * 6. With `bounds`, each record that lands is counted (history-bounds.ts); once the history reached
 *    its hard limit, every append but the run's end (RunCompleted, RunFailed, RunCancelled) is
 *    refused with HistoryLimitError, which stops nothing: the run's end still lands after it.
 */
import { JournalConflictError } from '@baton/core/adapter';
import { PayloadTooLargeError, UnencodableValueError } from '@baton/core';
import type { Checkpoint, Store, Transport } from '@baton/core/adapter';
import {
  checkpointSchemaFor,
  encodeEntries,
  journalRecordContext,
  unencodableEntries,
  IDENTITY_PAYLOAD_CODEC,
  linkEntries,
  protectCheckpoint,
  type ClaimCheck,
  type JournalEntry,
  type NewEntry,
  type PayloadProtection,
  HistoryLimitError,
  LeaseLostError,
} from '@baton/core/runtime';
import type { WorkerInstruments } from '@baton/telemetry';
import type { FaultHook } from '../faults.js';
import type { HistoryBounds } from './history-bounds.js';

const IDENTITY = { codec: IDENTITY_PAYLOAD_CODEC };

/** Appends waiting for the record in flight; they go out together as the next one. */
interface Waiting {
  entries: JournalEntry[];
  checkpoint: boolean;
  unencodableFailsStep: boolean;
  resolve(): void;
  reject(err: unknown): void;
}

/** What `append` may be told besides the entries. */
export interface AppendOptions {
  /** Write a checkpoint once these entries are durable. */
  checkpoint?: boolean;
  /**
   * These entries hold an activity's outcome, and its step journals ActivityFailed in their place
   * when a value in them cannot be encoded: an UnencodableValueError then rejects this append
   * alone and later appends go on (invariant 4).
   */
  unencodableFailsStep?: boolean;
}

/** What a writer is made of: one run's journal under one epoch, from where its history ends. */
export interface JournalWriterOptions {
  transport: Transport;
  store: Store;
  runId: string;
  epoch: number;
  /** The effective entries so far (checkpoint + tail); the writer appends to this array. */
  entries: JournalEntry[];
  /** The journal position of the last record read or written. */
  position: number;
  /** The seq of the newest checkpoint; the next one gets the seq after it. */
  checkpointSeq: number;
  /** Checkpoint every this many entries. */
  checkpointEvery: number;
  faults?: FaultHook | undefined;
  instruments?: WorkerInstruments | undefined;
  /** Payload protection when it is on; undefined keeps the identity path. */
  protection?: PayloadProtection | undefined;
  /** The chain head after `entries` when the hash chain is on. */
  head?: string | undefined;
  /** Stores large values by reference; undefined journals every value inline. */
  claimCheck?: ClaimCheck | undefined;
  /** Told when a step's result could not be encoded (the step fails in its place). */
  onUnencodableStep?: ((err: UnencodableValueError) => void) | undefined;
  /** Stamps entries and checkpoints: the store's clock as the worker estimates it (store-clock.ts). @defaultValue Date.now */
  clock?: () => number;
  /** An entry for the head of the first record (invariant 5): a first owner's LeaseAcquired. */
  leadEntry?: JournalEntry | undefined;
  /** Counts the history against the worker's limits (invariant 6); undefined counts nothing. */
  bounds?: HistoryBounds | undefined;
}

/** A record the bus or the codec refused for what it holds: it wrote nothing. */
function refusedForValue(err: unknown): err is PayloadTooLargeError | UnencodableValueError {
  return err instanceof PayloadTooLargeError || err instanceof UnencodableValueError;
}

/** True for an append a writer past its history's hard limit still sends: the run's end. */
function onlyRunEnd(entries: readonly JournalEntry[]): boolean {
  const type = entries.length === 1 ? entries[0]!.type : undefined;
  return type === 'RunCompleted' || type === 'RunFailed' || type === 'RunCancelled';
}

/** True for the one append a blocked writer still sends: the run's failure. */
function onlyRunFailed(entries: readonly JournalEntry[]): boolean {
  return entries.length === 1 && entries[0]!.type === 'RunFailed';
}

export class JournalWriter {
  private chain: Promise<unknown> = Promise.resolve();
  /** Tasks on `chain` not yet settled (records, checkpoints); at 0 an append is sent at once. */
  private tasks = 0;
  /** Appends not yet sent; a batch task is queued on `chain` whenever this is non-empty. */
  private waiting: Waiting[] = [];
  private sinceCheckpoint = 0;
  private stopCause: unknown;
  /** An append refused for its value that nobody replaces (invariant 4): only RunFailed goes after it. */
  private blockCause: PayloadTooLargeError | UnencodableValueError | undefined;

  private readonly transport: Transport;
  private readonly store: Store;
  readonly runId: string;
  readonly epoch: number;
  /** The effective entries so far (checkpoint + tail + what this writer appended). */
  readonly entries: JournalEntry[];
  private lastPosition: number;
  private checkpointSeq: number;
  private readonly checkpointEvery: number;
  private readonly faults: FaultHook | undefined;
  private readonly instruments: WorkerInstruments | undefined;
  private readonly protection: PayloadProtection | undefined;
  private head: string | undefined;
  private readonly claimCheck: ClaimCheck | undefined;
  private readonly onUnencodableStep: ((err: UnencodableValueError) => void) | undefined;
  private readonly clock: () => number;
  /** Not sent yet: joins the next record (invariant 5). */
  private leadEntry: JournalEntry | undefined;
  private readonly bounds: HistoryBounds | undefined;

  constructor(options: JournalWriterOptions) {
    this.transport = options.transport;
    this.store = options.store;
    this.runId = options.runId;
    this.epoch = options.epoch;
    this.entries = options.entries;
    this.lastPosition = options.position;
    this.checkpointSeq = options.checkpointSeq;
    this.checkpointEvery = options.checkpointEvery;
    this.faults = options.faults;
    this.instruments = options.instruments;
    this.protection = options.protection;
    this.head = options.head;
    this.claimCheck = options.claimCheck;
    this.onUnencodableStep = options.onUnencodableStep;
    this.clock = options.clock ?? Date.now;
    this.leadEntry = options.leadEntry;
    this.bounds = options.bounds;
  }

  get position(): number {
    return this.lastPosition;
  }

  /**
   * Appends after every earlier append; resolves once these entries are durable. Checkpoints when
   * asked or every `checkpointEvery` entries.
   */
  append(newEntries: NewEntry[], options?: AppendOptions): Promise<void> {
    const at = this.clock();
    // The writer takes the entries over and stamps them in place: callers build them for this
    // append only, and a copy per entry (an object spread) was a measurable share of a busy worker.
    const stamped = newEntries as JournalEntry[];
    for (const entry of stamped) {
      entry.epoch = this.epoch;
      entry.at = at;
    }
    const checkpoint = options?.checkpoint === true;
    const replaceable = options?.unencodableFailsStep === true;
    if (this.tasks === 0) {
      // Nothing queued or on its way (a strict step's append, as a rule): this append is the
      // next record on its own, sent now, with no batch, queue entry or extra promise around it.
      this.tasks++;
      const sent = this.sendOne(stamped, checkpoint, replaceable);
      this.chain = sent.then(this.taskDone, this.taskDone);
      return sent;
    }
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ entries: stamped, checkpoint, unencodableFailsStep: replaceable, resolve, reject });
      if (this.waiting.length > 1) return; // a batch task is queued already and will take these too
      this.tasks++;
      const done = this.chain.then(() => this.sendWaiting());
      this.chain = done.then(this.taskDone, this.taskDone);
    });
  }

  /** A task on the chain settled (its failure is its caller's, never the chain's). */
  private readonly taskDone = (): void => {
    this.tasks--;
  };

  /**
   * Sends every append waiting now as one record; when the record is refused for a value in it
   * (too large together, or one entry cannot be encoded), one record per append instead, so the
   * others land and only the append at fault fails.
   */
  private async sendWaiting(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length === 1) return this.sendWaiter(batch[0]!);
    try {
      await this.appendNow(
        batch.flatMap((w) => w.entries),
        batch.some((w) => w.checkpoint),
      );
    } catch (err) {
      if (refusedForValue(err) || err instanceof HistoryLimitError) {
        // Each settles on its own; one failing never leaves a later one unsettled.
        for (const w of batch) await this.sendWaiter(w).catch(() => undefined);
        return;
      }
      this.stop(err);
      for (const w of batch) w.reject(err);
      throw err;
    }
    for (const w of batch) w.resolve();
  }

  /** Sends one waiting append as its own record and settles it. */
  private async sendWaiter(w: Waiting): Promise<void> {
    try {
      await this.sendOne(w.entries, w.checkpoint, w.unencodableFailsStep);
    } catch (err) {
      w.reject(err);
      throw err;
    }
    w.resolve();
  }

  /** Sends one append as its own record. */
  private async sendOne(entries: JournalEntry[], checkpoint: boolean, replaceable: boolean): Promise<void> {
    try {
      await this.appendNow(entries, checkpoint);
    } catch (err) {
      // A record that failed leaves a gap: nothing after it may land, or the journal would hold
      // later steps without earlier ones. A record refused for its value wrote nothing: see
      // invariant 4 for what may follow it. One refused for the history's size wrote nothing
      // either, and only the run's end follows it (invariant 6).
      if (err instanceof HistoryLimitError) throw err;
      if (!refusedForValue(err)) this.stop(err);
      // An error that is the block itself was an earlier append's value: nothing new to record.
      else if (err !== this.blockCause) {
        if (replaceable && err instanceof UnencodableValueError) this.onUnencodableStep?.(err);
        else this.blockCause ??= err;
      }
      throw err;
    }
  }

  /** Refuses every later append (the lease is lost or the run aborted). */
  stop(cause: unknown): void {
    this.stopCause ??= cause ?? new Error('journal writer stopped');
  }

  /** Resolves when every append issued so far has settled. */
  flush(): Promise<unknown> {
    return this.chain;
  }

  /** Writes a checkpoint of everything appended so far (after pending appends). */
  checkpoint(status: Checkpoint['status']): Promise<void> {
    this.tasks++;
    const done = this.chain.then(() => this.writeCheckpoint(this.snapshot(status)));
    this.chain = done.then(this.taskDone, this.taskDone);
    return done;
  }

  /** Writes a checkpoint to the store, timing it. */
  private async writeCheckpoint(checkpoint: Checkpoint): Promise<void> {
    const started = performance.now();
    await this.store.checkpoints.write(checkpoint);
    this.instruments?.checkpointWriteDuration.record((performance.now() - started) / 1000);
  }

  /** The checkpoint record for the current state, protected (chain head, sealed, signed) when that is on. */
  snapshot(status: Checkpoint['status']): Checkpoint {
    this.sinceCheckpoint = 0;
    const checkpoint: Checkpoint = {
      runId: this.runId,
      seq: ++this.checkpointSeq,
      epoch: this.epoch,
      journalPosition: this.lastPosition,
      entries: this.entries,
      status,
      schemaVersion: checkpointSchemaFor(this.entries),
      createdAt: this.clock(),
    };
    if (this.protection === undefined) return checkpoint;
    return protectCheckpoint(
      this.head === undefined ? checkpoint : { ...checkpoint, chainHead: this.head },
      this.protection,
    );
  }

  /** The entries as they will be journaled (chain-linked when the chain is on), and their bytes. */
  private encode(given: readonly JournalEntry[]): {
    stamped: JournalEntry[];
    head: string | undefined;
    plain: Uint8Array;
  } {
    if (this.head === undefined)
      return { stamped: given as JournalEntry[], head: undefined, plain: encodeEntries(given) };
    let linked: { entries: JournalEntry[]; head: string };
    try {
      linked = linkEntries(given, this.head);
    } catch (cause) {
      // The chain hashes each entry's canonical JSON before encodeEntries runs: a value with no
      // JSON form fails there first, and is named the same way.
      throw unencodableEntries(given, cause);
    }
    return { stamped: linked.entries, head: linked.head, plain: encodeEntries(linked.entries) };
  }

  private async appendNow(given: JournalEntry[], checkpoint: boolean): Promise<void> {
    if (this.stopCause !== undefined) throw this.stopCause;
    if (this.blockCause !== undefined && !onlyRunFailed(given)) throw this.blockCause;
    const exceeded = this.bounds?.exceeded;
    if (exceeded !== undefined && !onlyRunEnd(given)) throw exceeded;
    // Fault points exist for tests; without them the hot path builds no info and awaits nothing.
    const faults = this.faults;
    const info = faults && { runId: this.runId, epoch: this.epoch, entryTypes: given.map((e) => e.type) };
    if (faults && info) await faults('before-journal-append', info);
    const lead = this.leadEntry;
    if (lead !== undefined) given = [lead, ...given];
    // Without the hash chain (the rule) the entries go out as given: no wrapper object per record.
    let stamped = given;
    let head: string | undefined;
    let plain: Uint8Array;
    if (this.head === undefined) plain = encodeEntries(given);
    else ({ stamped, head, plain } = this.encode(given));
    // Claim check: only a record above the threshold can hold a value above it, so the common
    // record is encoded once and costs one length comparison here.
    const claimCheck = this.claimCheck;
    if (claimCheck !== undefined && plain.byteLength > claimCheck.thresholdBytes) {
      const offloaded = await claimCheck.offloadEntries(this.runId, given);
      if (offloaded !== given) ({ stamped, head, plain } = this.encode(offloaded));
    }
    const codec = (this.protection ?? IDENTITY).codec;
    const started = performance.now();
    try {
      this.lastPosition = await this.transport.journal.append({
        runId: this.runId,
        data: codec.identity ? plain : codec.encode(plain, journalRecordContext(this.runId)),
        expectedLastPosition: this.transport.journal.supportsOptimisticAppend ? this.lastPosition : undefined,
      });
    } catch (err) {
      if (err instanceof JournalConflictError) {
        throw new LeaseLostError(this.runId, this.epoch, 'another writer appended to the journal');
      }
      throw err;
    }
    this.instruments?.journalAppendDuration.record((performance.now() - started) / 1000);
    if (lead !== undefined) this.leadEntry = undefined;
    this.entries.push(...stamped);
    this.bounds?.appended(this.entries.length, plain.byteLength);
    if (head !== undefined) this.head = head;
    this.sinceCheckpoint += stamped.length;
    if (faults && info) await faults('after-journal-append', info);
    if (checkpoint || this.sinceCheckpoint >= this.checkpointEvery) {
      await this.writeCheckpoint(this.snapshot('running'));
    }
  }
}
