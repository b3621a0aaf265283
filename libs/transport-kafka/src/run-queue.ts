/**
 * The run queue on Kafka: the runs topic read by one consumer group, turned into the contract's
 * fetch/ack/nak deliveries.
 *
 * - The consumer starts on the first fetch(), never at connect(): a producer that only enqueues
 *   must not join the group and take partitions it will never read.
 * - Records go into a bounded in-process buffer; fetch() takes from it. When the buffer holds
 *   `maxBufferedMessages`, the topic's partitions are paused (kafkajs stops fetching them) and
 *   resumed once it has drained to half: memory stays bounded however far behind the workers are.
 * - An offset is committed only when every record before it in its partition was acked, and the
 *   worker acks only once the run's claim is durable in the store. A worker that dies therefore
 *   leaves its un-acked records to the next owner of the partition.
 * - nak(delay) and an expired ack wait deliver the record again from this process, with a higher
 *   delivery count; its offset stays uncommitted meanwhile, so a crash loses nothing.
 * - A rebalance (GROUP_JOIN) starts a new generation: the buffer is dropped, pending offsets are
 *   forgotten, and kafkajs fetches every assigned partition again from its committed offset. Acks
 *   of older deliveries commit nothing; their records come again and are harmless, because the
 *   store refuses a second lease on a run that is held or finished.
 * - passOn(delay) publishes the record again on the next partition (in partition order, wrapping)
 *   that this member does not hold, without a key, with its delivery count in a header, then acks
 *   it here: a record this member cannot use (a workflow version it lacks) reaches another member
 *   without waiting for a rebalance. Hop after hop the record walks the partitions forward, so it
 *   reaches every member within one turn of the topic. A member holding every partition redelivers
 *   it to itself, as nak does.
 * - msgId de-duplication is best effort and per process: a record whose `baton-msg-id` was seen at
 *   another offset within `dedupWindowMs` is acked unseen.
 */
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { BatonError } from '@baton/core';
import type { Delivery, FetchOptions } from '@baton/core/adapter';
import type { KafkaLogHook } from './client.js';
import { headersOf } from './partition-reader.js';
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
  generation: number;
  data: Uint8Array;
  headers: Record<string, string>;
  deliveryCount: number;
}

interface PartitionState {
  /** Offsets taken from Kafka and not yet acked (buffered, delivered or held back by a nak). */
  pending: Set<number>;
  /** The next offset after everything taken so far. */
  next: number;
  /** The offset last committed (or being committed). */
  committed: number;
}

/** A snapshot of the run queue's state in this process. */
export interface KafkaQueueStats {
  /** Records fetched from Kafka and waiting for fetch(). */
  buffered: number;
  /** Records taken from Kafka and not yet acked (buffered, delivered or held back by a nak). */
  pendingOffsets: number;
  /** True while the runs topic is paused because the buffer is full. */
  paused: boolean;
  /** Group generations joined so far (each rebalance adds one). */
  generation: number;
  /** Partitions of the runs topic this member holds. */
  assignedPartitions: number[];
}

interface Waiter {
  max: number;
  resolve(batch: Delivery[]): void;
}

export class KafkaRunQueue {
  private consumer: Consumer | undefined;
  private starting: Promise<void> | undefined;
  private generation = 0;
  private readonly buffer: Entry[] = [];
  private readonly waiters: Waiter[] = [];
  private partitions = new Map<number, PartitionState>();
  private paused = false;
  private closed = false;
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly seen = new Map<string, { where: string; at: number }>();
  /** Partitions of the runs topic this member holds, as of the last join. */
  private assigned: number[] = [];
  private commitQueued = false;
  private committing: Promise<void> = Promise.resolve();

  constructor(
    private readonly kafka: Kafka,
    private readonly options: ResolvedKafkaOptions,
    private readonly layout: KafkaLayout,
    private readonly partitionCount: number,
    private readonly log: KafkaLogHook | undefined,
    /** Publishes a record (the transport's producer); passOn needs it. */
    private readonly send?: (record: OutgoingRecord) => Promise<unknown>,
  ) {}

  /** What the queue holds right now, for metrics and tests. */
  stats(): KafkaQueueStats {
    let pending = 0;
    for (const state of this.partitions.values()) pending += state.pending.size;
    return {
      buffered: this.buffer.length,
      pendingOffsets: pending,
      paused: this.paused,
      generation: this.generation,
      assignedPartitions: [...this.assigned],
    };
  }

  /** Partitions this process consumes right now (empty before the first fetch or mid-rebalance). */
  get localPartitions(): readonly number[] {
    return this.assigned;
  }

  async fetch(options: FetchOptions): Promise<Delivery[]> {
    this.start();
    const max = Math.max(1, Math.floor(options.max));
    if (this.buffer.length > 0) return this.take(max);
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

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of [...this.waiters]) waiter.resolve([]);
    this.buffer.length = 0;
    await this.starting?.catch(() => undefined);
    await this.committing.catch(() => undefined);
    // Leaving the group hands its partitions to the other members at once; un-acked records are
    // read again by their new owners from the committed offsets.
    await this.consumer?.disconnect().catch(() => undefined);
  }

  // ---------------------------------------------------------------------------------------------

  private start(): void {
    if (this.starting !== undefined || this.closed) return;
    const consumer = this.kafka.consumer({
      groupId: this.layout.groupId,
      sessionTimeout: this.options.sessionTimeoutMs,
      rebalanceTimeout: Math.max(this.options.sessionTimeoutMs, 10_000),
      heartbeatInterval: this.options.heartbeatIntervalMs,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 250,
      retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 2_000 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      this.newGeneration(event.payload.memberAssignment[this.layout.runsTopic] ?? []);
    });
    consumer.on(consumer.events.CRASH, (event) => {
      this.log?.('error', 'kafka run-queue consumer crashed', {
        error: String(event.payload.error),
        restart: event.payload.restart,
      });
    });
    this.starting = (async () => {
      await consumer.connect();
      await consumer.subscribe({ topic: this.layout.runsTopic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.partitionCount,
        eachBatch: (payload) => this.accept(payload),
      });
    })();
    this.starting.catch((err: unknown) => {
      this.log?.('error', 'kafka run-queue consumer failed to start', { error: String(err) });
      // A later fetch tries again.
      if (this.consumer === consumer) {
        this.consumer = undefined;
        this.starting = undefined;
      }
      void consumer.disconnect().catch(() => undefined);
    });
  }

  private newGeneration(assigned: number[]): void {
    this.generation++;
    this.assigned = [...assigned].sort((a, b) => a - b);
    this.log?.('info', 'kafka run-queue partitions assigned', {
      generation: this.generation,
      partitions: this.assigned,
    });
    this.buffer.length = 0;
    this.partitions = new Map();
    if (this.paused) {
      this.paused = false;
      this.consumer?.resume([{ topic: this.layout.runsTopic }]);
    }
  }

  private async accept(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, isRunning, isStale, heartbeat } = payload;
    const generation = this.generation;
    for (const message of batch.messages) {
      if (!isRunning() || isStale() || this.closed || generation !== this.generation) return;
      if (this.buffer.length >= this.options.maxBufferedMessages) {
        this.pause();
        break; // the rest is fetched again from the last resolved offset after resume
      }
      this.take1(batch.partition, message, generation);
      resolveOffset(message.offset);
    }
    await heartbeat();
  }

  private take1(partition: number, message: KafkaMessage, generation: number): void {
    const offset = Number(message.offset);
    let state = this.partitions.get(partition);
    if (state === undefined) {
      state = { pending: new Set(), next: offset, committed: offset };
      this.partitions.set(partition, state);
    }
    state.next = offset + 1;
    const headers = headersOf(message.headers as Parameters<typeof headersOf>[0]);
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
    this.buffer.push(entry);
    while (this.waiters.length > 0 && this.buffer.length > 0) {
      const waiter = this.waiters[0]!;
      waiter.resolve(this.take(waiter.max));
    }
  }

  private take(max: number): Delivery[] {
    const entries = this.buffer.splice(0, max);
    if (this.paused && this.buffer.length <= this.options.maxBufferedMessages / 2) this.resume();
    return entries.map((entry) => this.deliver(entry));
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.consumer?.pause([{ topic: this.layout.runsTopic }]);
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.consumer?.resume([{ topic: this.layout.runsTopic }]);
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
   * rebalance or close: nothing is published, and the partition's next owner reads the record
   * again from the committed offset. A failed publish redelivers it here instead (never lost).
   */
  private passOn(entry: Entry, delayMs: number): void {
    const target = this.passOnTarget(entry.partition);
    if (target === undefined || this.send === undefined) {
      this.redeliver(entry, delayMs);
      return;
    }
    const send = this.send;
    const publish = async (): Promise<void> => {
      if (this.closed || entry.generation !== this.generation) return;
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
    if (this.closed || entry.generation !== this.generation) return;
    const again = { ...entry, deliveryCount: entry.deliveryCount + 1 };
    if (delayMs <= 0) {
      this.push(again);
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.closed && entry.generation === this.generation) this.push(again);
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  private async acked(entry: Entry): Promise<void> {
    if (this.closed || entry.generation !== this.generation) return;
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
      const offsets: Array<{ topic: string; partition: number; offset: string }> = [];
      for (const [partition, state] of this.partitions) {
        let low = state.next;
        for (const offset of state.pending) if (offset < low) low = offset;
        if (low > state.committed) {
          offsets.push({ topic: this.layout.runsTopic, partition, offset: String(low) });
          state.committed = low;
        }
      }
      if (offsets.length === 0 || this.consumer === undefined) return;
      try {
        await this.consumer.commitOffsets(offsets);
      } catch (err) {
        // Mid-rebalance: the partitions' next owners read from the last commit; what this commit
        // would have covered comes again and is recognised as already claimed.
        if (generation === this.generation) {
          for (const o of offsets) {
            const state = this.partitions.get(o.partition);
            if (state !== undefined) state.committed = Math.min(state.committed, Number(o.offset) - 1);
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

export function closedQueueError(operation: string): BatonError {
  return new BatonError(
    'BATON_CLOSED',
    `kafka transport: ${operation} called after close(); create a new transport instead`,
  );
}
