/**
 * The run's streams on this worker (docs/streams.md): one writer per stream, appending what the
 * workflow and its activities write, in order, to the bus's run streams (contracts/run-streams.ts)
 * in core's record format (runtime/run-stream-records.ts).
 *
 * Invariants:
 * 1. One append in flight per stream: writes that arrive meanwhile wait and go together in the
 *    next record (at most {@link MAX_RECORD_ITEMS} items and about {@link MAX_RECORD_BYTES}), so
 *    a token stream costs one bus round trip per batch, not per token.
 * 2. Before its first append a writer reads the stream (once per session): its last position,
 *    sequence number, epoch and workflow write number. A workflow write whose number is already
 *    there was written by an earlier execution (this is a replay) and is skipped.
 * 3. Fencing. Every record carries the session's epoch. On a bus with optimistic append each
 *    record expects the last position the writer knows; a conflict re-reads the tail: a record of
 *    a newer epoch there means this session was fenced (its writes reject with LeaseLostError),
 *    otherwise the items are numbered again after the tail and appended again (at most
 *    {@link MAX_CONFLICTS} times). On a bus without it (Kafka) the writer's first record is a fence
 *    (no items): it then reads up to its fence, and readers ignore every older epoch's record
 *    after it (the fold's rule 2), so its numbering is the one readers follow.
 * 4. An activity's chunks carry its step and attempt; the first chunk of an attempt other than
 *    the one whose chunks the stream last holds for that step is preceded by a `reset` item.
 * 5. A failed append other than a conflict rejects its writes and stops the writer for good; the
 *    session is told (`onFailure`), and the run resumes elsewhere, where the replay writes the
 *    workflow's chunks again (invariant 2) and a re-run activity starts with a reset.
 */
import { BatonError, PayloadTooLargeError } from '@baton/core';
import { JournalConflictError, type RunStreamLog } from '@baton/core/adapter';
import {
  encodeStreamRecord,
  LeaseLostError,
  StreamFold,
  type PayloadCodec,
  type StreamWrite,
  type WireStreamItem,
} from '@baton/core/runtime';

/** Items in one record at most. */
export const MAX_RECORD_ITEMS = 512;
/** About the bytes of one record's values at most (a larger single chunk goes alone). */
export const MAX_RECORD_BYTES = 256 * 1024;
/** Conflicts one batch may meet before its writes reject (another writer keeps appending). */
const MAX_CONFLICTS = 8;

export interface RunStreamsOptions {
  log: RunStreamLog;
  runId: string;
  epoch: number;
  codec: PayloadCodec;
  /** The run's start (its record's createdAt), for a bus that scans a shared log. */
  sinceMs: number;
  /** A writer stopped for a reason other than a refused write: the session stops the run. */
  onFailure(err: unknown): void;
}

interface Pending {
  write: StreamWrite;
  /** The JSON length of the value, for the record's size. */
  bytes: number;
  resolve(): void;
  reject(err: unknown): void;
}

/** The streams of one run session. */
export class RunStreams {
  private readonly writers = new Map<string, StreamWriter>();

  constructor(private readonly options: RunStreamsOptions) {}

  /** Queues a write to `stream`; resolves once it is durable (or skipped as a replay's). */
  write(stream: string, write: StreamWrite, bytes: number): Promise<void> {
    let writer = this.writers.get(stream);
    if (writer === undefined)
      this.writers.set(stream, (writer = new StreamWriter(this.options.log, stream, this.options)));
    return writer.write(write, bytes);
  }

  /** Resolves once every write queued so far is durable; rejects with a writer's failure. */
  async flush(): Promise<void> {
    await Promise.all([...this.writers.values()].map((w) => w.flush()));
  }

  /** The session lost its lease: every queued write rejects with `cause`. */
  stop(cause: unknown): void {
    for (const writer of this.writers.values()) writer.stop(cause);
  }
}

class StreamWriter {
  private fold: StreamFold | undefined;
  private queue: Pending[] = [];
  /** The pump while it runs; cleared by the pump itself as it leaves its loop (no await between). */
  private pumping: Promise<void> | undefined;
  private failure: unknown;

  constructor(
    private readonly log: RunStreamLog,
    private readonly stream: string,
    private readonly options: RunStreamsOptions,
  ) {}

  write(write: StreamWrite, bytes: number): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ write, bytes, resolve, reject });
      this.pumping ??= this.pump();
    });
  }

  async flush(): Promise<void> {
    while (this.pumping !== undefined) await this.pumping;
    if (this.failure !== undefined) throw this.failure;
  }

  stop(cause: unknown): void {
    this.failure ??= cause;
    for (const pending of this.queue.splice(0)) pending.reject(cause);
  }

  private async pump(): Promise<void> {
    for (;;) {
      // Cleared in the same turn as the last look at the queue: a write queued after it starts a
      // new pump rather than waiting on this one.
      if (this.queue.length === 0 || this.failure !== undefined) {
        this.pumping = undefined;
        return;
      }
      const batch = this.takeBatch();
      try {
        await this.appendBatch(batch);
        for (const pending of batch) pending.resolve();
      } catch (err) {
        for (const pending of batch) pending.reject(err);
        // A chunk the bus refuses for its size fails its own write only (the caller was told).
        if (err instanceof PayloadTooLargeError) continue;
        this.stop(err);
        this.options.onFailure(err);
      }
    }
  }

  /** The next writes to append together (invariant 1). */
  private takeBatch(): Pending[] {
    let bytes = 0;
    let count = 0;
    while (count < this.queue.length && count < MAX_RECORD_ITEMS) {
      const next = this.queue[count]!.bytes;
      if (count > 0 && bytes + next > MAX_RECORD_BYTES) break;
      bytes += next;
      count++;
    }
    return this.queue.splice(0, count);
  }

  private async appendBatch(batch: Pending[]): Promise<void> {
    const fold = this.fold ?? (await this.open());
    // A write refused for a closed stream (itemsFor) is settled there; its later resolve does nothing.
    const { runId, epoch, codec } = this.options;
    for (let conflicts = 0; ; conflicts++) {
      if (fold.maxEpoch > epoch) throw this.fenced(fold.maxEpoch);
      const items = this.itemsFor(batch, fold);
      if (items.length === 0) return;
      const data = encodeStreamRecord(codec, runId, this.stream, epoch, items);
      try {
        const position = await this.log.append({
          runId,
          stream: this.stream,
          data,
          ...(this.log.supportsOptimisticAppend && { expectedLastPosition: fold.lastPosition }),
        });
        // What it wrote is what it knows: no need to decode (and decrypt) its own record.
        fold.accept(position, epoch, items);
        return;
      } catch (err) {
        if (!(err instanceof JournalConflictError) || conflicts >= MAX_CONFLICTS) throw err;
        fold.applyAll(await this.log.read(runId, this.stream, fold.lastPosition));
      }
    }
  }

  /** Numbers the batch's writes after the stream's last item (invariants 2 and 4). */
  private itemsFor(batch: Pending[], fold: StreamFold): WireStreamItem[] {
    const items: WireStreamItem[] = [];
    const attempts = new Map(fold.attempts);
    let seq = fold.lastSeq;
    let closed = fold.closed;
    const { epoch } = this.options;
    for (const pending of batch) {
      const { write } = pending;
      if (write.ordinal !== undefined && write.ordinal <= fold.lastOrdinal) continue;
      if (closed) {
        // Refused alone: its caller hears why, the other writes of the batch go on.
        pending.reject(
          new BatonError(
            'BATON_STREAM_CLOSED',
            `run ${this.options.runId}: stream '${this.stream}' is closed; nothing more can be written to it`,
          ),
        );
        continue;
      }
      const origin: Partial<WireStreamItem> = {
        ...(write.ordinal !== undefined && { o: write.ordinal }),
        ...(write.step !== undefined && { p: write.step, t: write.attempt ?? 1 }),
      };
      if (write.step !== undefined) {
        const label = `${epoch}:${write.attempt ?? 1}`;
        const previous = attempts.get(write.step);
        if (previous !== undefined && previous !== label) {
          items.push({ s: ++seq, k: 'r', p: write.step, t: write.attempt ?? 1 });
        }
        attempts.set(write.step, label);
      }
      if (write.kind === 'close') {
        closed = true;
        items.push({ s: ++seq, k: 'x', ...origin });
      } else {
        items.push({ s: ++seq, k: 'c', v: write.value, ...origin });
      }
    }
    return items;
  }

  /** Reads the stream once (invariant 2), registers a new one, and fences where needed (invariant 3). */
  private async open(): Promise<StreamFold> {
    const { runId, epoch, codec, sinceMs } = this.options;
    const fold = new StreamFold(codec, runId, this.stream);
    fold.applyAll(await this.log.read(runId, this.stream, 0, { sinceMs }));
    if (fold.lastPosition === 0) await this.log.register(runId, this.stream, { sinceMs });
    if (!this.log.supportsOptimisticAppend && fold.maxEpoch < epoch) {
      const fence = await this.log.append({
        runId,
        stream: this.stream,
        data: encodeStreamRecord(codec, runId, this.stream, epoch, []),
      });
      const landed = await this.log.read(runId, this.stream, fold.lastPosition, { sinceMs });
      fold.applyAll(landed.filter((r) => r.position <= fence));
    }
    this.fold = fold;
    return fold;
  }

  private fenced(newer: number): LeaseLostError {
    return new LeaseLostError(
      this.options.runId,
      this.options.epoch,
      `run stream '${this.stream}' holds a record of epoch ${newer}: a newer owner writes it`,
    );
  }
}
