/**
 * What the Kafka run queue's two ownership modes share (run-queue.ts starts one of them): the
 * records taken from the partitions this member holds, kept in a buffer and handed out as the
 * contract's fetch/ack/nak deliveries. How records arrive, and which partitions are held, is the
 * mode's: a consumer group (group-consumer.ts) or the store's presence (presence-reader.ts).
 *
 * - Records go into a bounded in-process buffer; fetch() takes from it. When the buffer holds
 *   `maxBufferedMessages`, the mode stops reading (paused) and reads on once it has drained to
 *   half: memory stays bounded however far behind the workers are.
 * - An offset is committed only when every record before it in its partition was acked, and the
 *   worker acks only once the run's claim is durable in the store. A worker that dies therefore
 *   leaves its un-acked records to the next owner of the partition.
 * - nak(delay) and an expired ack wait deliver the record again from this process, with a higher
 *   delivery count; its offset stays uncommitted meanwhile, so a crash loses nothing.
 * - Tenure: every partition held has the generation in which this member took it. A record is
 *   taken in its partition's tenure; once the partition moved on (a rebalance, a change of owner),
 *   acks of its deliveries commit nothing and it is not delivered again here. Its record comes
 *   again from the committed offset and is harmless, because the store refuses a second lease on a
 *   run that is held or finished.
 * - passOn(delay) publishes the record again on the next partition (in partition order, wrapping)
 *   that this member does not hold, without a key, with its delivery count in a header, then acks
 *   it here: a record this member cannot use (a workflow version it lacks) reaches another member
 *   without waiting for a change of partitions. Hop after hop the record walks the partitions
 *   forward, so it reaches every member within one turn of the topic. A member holding every
 *   partition redelivers it to itself, as nak does.
 * - msgId de-duplication is best effort and per process: a record whose `baton-msg-id` was seen at
 *   another offset within `dedupWindowMs` is acked unseen.
 */
import type { Delivery, FetchOptions } from '@baton/core/adapter';
import type { KafkaLogHook } from './client.js';
import type { KafkaLayout } from './layout.js';
import type { ResolvedKafkaOptions } from './options.js';
import type { OutgoingRecord } from './producer.js';

/** Headers the transport sets for itself; not shown to the consumer. */
export const MSG_ID_HEADER = 'baton-msg-id';
/** The delivery count a passed-on record goes on from (set by passOn, read by the next owner). */
export const DELIVERY_COUNT_HEADER = 'baton-delivery-count';

interface Entry {
  partition: number;
  offset: number;
  /** The partition's tenure when the record was taken ({@link RunBuffer.isCurrent}). */
  generation: number;
  data: Uint8Array;
  headers: Record<string, string>;
  deliveryCount: number;
}

/** Where this member is in one partition it holds. */
interface PartitionState {
  /** Offsets taken from Kafka and not yet acked (buffered, delivered or held back by a nak). */
  pending: Set<number>;
  /** The next offset after everything taken so far. */
  next: number;
  /** The offset last committed (or being committed). */
  committed: number;
}

/** A record as a mode hands it over. */
export interface TakenRecord {
  offset: number;
  headers: Record<string, string>;
  value: Buffer | null;
}

/** A snapshot of the run queue's state in this process. */
export interface KafkaQueueStats {
  /** Records fetched from Kafka and waiting for fetch(). */
  buffered: number;
  /** Records taken from Kafka and not yet acked (buffered, delivered or held back by a nak). */
  pendingOffsets: number;
  /** True while the runs topic is paused because the buffer is full. */
  paused: boolean;
  /** Partition changes so far: group generations joined, or changes of the owned partitions. */
  generation: number;
  /** Partitions of the runs topic this member holds. */
  assignedPartitions: number[];
}

/** What the buffer asks of the ownership mode that feeds it. */
export interface PartitionFeed {
  /** The buffer is full: take no more records until {@link resume}. */
  pause(): void;
  /** The buffer drained to half: take records again. */
  resume(): void;
  /** Commits these offsets of the runs topic for the workers' group. */
  commit(offsets: ReadonlyArray<{ partition: number; offset: number }>): Promise<void>;
}

interface Waiter {
  max: number;
  resolve(batch: Delivery[]): void;
}

/**
 * The buffer and the deliveries of one lane's queue. Its first fields are the state of the
 * partitions held, which the mode changes when its partitions change (a rebalance, a change of
 * owners); the rest is its own.
 */
export class RunBuffer {
  /** Partition changes so far; each starts a tenure for the partitions it gives this member. */
  generation = 0;
  /** Partitions of the runs topic this member holds. */
  assigned: number[] = [];
  /** Per partition held, the generation in which this member took it (its tenure). */
  readonly tenure = new Map<number, number>();
  /** Per partition held: what was taken, acked and committed. */
  partitions = new Map<number, PartitionState>();
  /** Records taken and not yet handed out, oldest first. */
  readonly entries: Entry[] = [];
  /** True while the mode takes no records because the buffer is full. */
  paused = false;
  closed = false;
  /** The mode that feeds the buffer, once started (none before, or after a failed start). */
  feed: PartitionFeed | undefined;
  private readonly waiters: Waiter[] = [];
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly seen = new Map<string, { where: string; at: number }>();
  private commitQueued = false;
  private committing: Promise<void> = Promise.resolve();

  /** The lane's options, layout (its runs topic), partition count and log, for the modes too. */
  constructor(
    readonly options: ResolvedKafkaOptions,
    readonly layout: KafkaLayout,
    readonly partitionCount: number,
    readonly log: KafkaLogHook | undefined,
    /** Publishes a record (the transport's producer); passOn needs it. */
    private readonly send?: (record: OutgoingRecord) => Promise<unknown>,
  ) {}

  /** True while the record's partition is held in the tenure it was taken in. */
  private isCurrent(entry: Entry): boolean {
    return this.tenure.get(entry.partition) === entry.generation;
  }

  /** What the queue holds right now, for metrics and tests. */
  stats(): KafkaQueueStats {
    let pending = 0;
    for (const state of this.partitions.values()) pending += state.pending.size;
    return {
      buffered: this.entries.length,
      pendingOffsets: pending,
      paused: this.paused,
      generation: this.generation,
      assignedPartitions: [...this.assigned],
    };
  }

  /** Up to `max` deliveries: buffered ones at once, else the first to arrive within `expiresMs`. */
  async fetch(options: FetchOptions): Promise<Delivery[]> {
    const max = Math.max(1, Math.floor(options.max));
    if (this.entries.length > 0) return this.take(max);
    if (options.expiresMs <= 0 || options.signal?.aborted) return [];
    return new Promise<Delivery[]>((resolve) => {
      // `timer` and `waiter` are set below, before anything can call `done`.
      const done = (batch: Delivery[]): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(batch);
      };
      const onAbort = (): void => done([]);
      const waiter: Waiter = { max, resolve: done };
      const timer = setTimeout(() => done([]), options.expiresMs);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Closing: waiting fetches get nothing, timers stop, and the buffer is dropped. */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of [...this.waiters]) waiter.resolve([]);
    this.entries.length = 0;
  }

  /** Resolves once the commits under way are done (close() waits for them before the mode leaves). */
  commitsDone(): Promise<void> {
    return this.committing.catch(() => undefined);
  }

  /**
   * Takes one record of `partition` into the buffer, or, the buffer being full, pauses and answers
   * false: the mode reads that record again after resume.
   */
  offer(partition: number, record: TakenRecord): boolean {
    if (this.entries.length >= this.options.maxBufferedMessages) {
      this.pause();
      return false;
    }
    this.take1(partition, record);
    return true;
  }

  private take1(partition: number, message: TakenRecord): void {
    const { offset, headers } = message;
    const generation = this.tenure.get(partition) ?? this.generation;
    let state = this.partitions.get(partition);
    if (state === undefined) {
      state = { pending: new Set(), next: offset, committed: offset };
      this.partitions.set(partition, state);
    }
    state.next = offset + 1;
    const msgId = headers[MSG_ID_HEADER];
    delete headers[MSG_ID_HEADER];
    const carried = Number(headers[DELIVERY_COUNT_HEADER]);
    delete headers[DELIVERY_COUNT_HEADER];
    if (msgId !== undefined && this.isDuplicate(msgId, `${partition}:${offset}`)) {
      // Seen at another offset: nothing to deliver; it commits with its neighbours.
      this.scheduleCommit();
      return;
    }
    state.pending.add(offset);
    this.push({
      partition,
      offset,
      generation,
      data: new Uint8Array(message.value ?? Buffer.alloc(0)),
      headers,
      deliveryCount: Number.isSafeInteger(carried) && carried > 1 ? carried : 1,
    });
  }

  private isDuplicate(msgId: string, where: string): boolean {
    const now = Date.now();
    for (const [id, entry] of this.seen) {
      if (now - entry.at <= this.options.dedupWindowMs) break;
      this.seen.delete(id);
    }
    const earlier = this.seen.get(msgId);
    if (earlier !== undefined) return earlier.where !== where;
    this.seen.set(msgId, { where, at: now });
    return false;
  }

  private push(entry: Entry): void {
    this.entries.push(entry);
    while (this.waiters.length > 0 && this.entries.length > 0) {
      const waiter = this.waiters[0]!;
      waiter.resolve(this.take(waiter.max));
    }
  }

  private take(max: number): Delivery[] {
    const entries = this.entries.splice(0, max);
    if (this.paused && this.entries.length <= this.options.maxBufferedMessages / 2) this.resume();
    return entries.map((entry) => this.deliver(entry));
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.feed?.pause();
  }

  /** Takes records again (the buffer drained, or a rebalance dropped it). */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.feed?.resume();
  }

  private deliver(entry: Entry): Delivery {
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(ackWait);
      this.timers.delete(ackWait);
      return true;
    };
    const ackWait = setTimeout(() => {
      if (settle()) this.redeliver(entry, 0);
    }, this.options.ackWaitMs);
    ackWait.unref();
    this.timers.add(ackWait);
    return {
      data: entry.data,
      headers: entry.headers,
      deliveryCount: entry.deliveryCount,
      ack: async () => {
        if (!settle()) return;
        await this.acked(entry);
      },
      nak: async (delayMs?: number) => {
        if (!settle()) return;
        this.redeliver(entry, delayMs ?? 0);
      },
      passOn: async (delayMs?: number) => {
        if (!settle()) return;
        this.passOn(entry, delayMs ?? 0);
      },
    };
  }

  /** The next partition after `from` (wrapping) that this member does not hold; none if it holds all. */
  private passOnTarget(from: number): number | undefined {
    for (let step = 1; step < this.partitionCount; step++) {
      const partition = (from + step) % this.partitionCount;
      if (!this.assigned.includes(partition)) return partition;
    }
    return undefined;
  }

  /**
   * Publishes the record again for another member, after `delayMs`, then acks it here. Mid-wait
   * change of partitions or close: nothing is published, and the partition's next owner reads the
   * record again from the committed offset. A failed publish redelivers it here instead (never lost).
   */
  private passOn(entry: Entry, delayMs: number): void {
    const target = this.passOnTarget(entry.partition);
    if (target === undefined || this.send === undefined) {
      this.redeliver(entry, delayMs);
      return;
    }
    const send = this.send;
    const publish = async (): Promise<void> => {
      if (this.closed || !this.isCurrent(entry)) return;
      try {
        await send({
          topic: this.layout.runsTopic,
          partition: target,
          key: null,
          value: Buffer.from(entry.data),
          headers: { ...entry.headers, [DELIVERY_COUNT_HEADER]: String(entry.deliveryCount + 1) },
        });
      } catch (err) {
        this.log?.('warn', 'passing a run message on failed; it is delivered here again', {
          error: String(err),
        });
        this.redeliver(entry, 0);
        return;
      }
      await this.acked(entry);
    };
    if (delayMs <= 0) {
      void publish();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void publish();
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  private redeliver(entry: Entry, delayMs: number): void {
    if (this.closed || !this.isCurrent(entry)) return;
    const again = { ...entry, deliveryCount: entry.deliveryCount + 1 };
    if (delayMs <= 0) {
      this.push(again);
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.closed && this.isCurrent(entry)) this.push(again);
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  private async acked(entry: Entry): Promise<void> {
    if (this.closed || !this.isCurrent(entry)) return;
    this.partitions.get(entry.partition)?.pending.delete(entry.offset);
    await this.scheduleCommit();
  }

  /**
   * Commits, for every partition, the lowest offset still pending (else the next one): one commit
   * request in flight at a time, covering every ack that came in meanwhile.
   */
  private scheduleCommit(): Promise<void> {
    if (this.commitQueued) return this.committing;
    this.commitQueued = true;
    this.committing = this.committing.then(async () => {
      this.commitQueued = false;
      const generation = this.generation;
      const offsets: Array<{ partition: number; offset: number }> = [];
      for (const [partition, state] of this.partitions) {
        let low = state.next;
        for (const offset of state.pending) if (offset < low) low = offset;
        if (low > state.committed) {
          offsets.push({ partition, offset: low });
          state.committed = low;
        }
      }
      if (offsets.length === 0) return;
      const feed = this.feed;
      if (feed === undefined) return;
      try {
        await feed.commit(offsets);
      } catch (err) {
        // Mid-rebalance: the partitions' next owners read from the last commit; what this commit
        // would have covered comes again and is recognised as already claimed.
        if (generation === this.generation) {
          for (const o of offsets) {
            const state = this.partitions.get(o.partition);
            if (state !== undefined) state.committed = Math.min(state.committed, o.offset - 1);
          }
        }
        this.log?.('warn', 'committing run-queue offsets failed; those records will be delivered again', {
          error: String(err),
        });
      }
    });
    return this.committing;
  }
}
