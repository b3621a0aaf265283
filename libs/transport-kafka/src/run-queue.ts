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
 *
 * Who reads which partition (option `partitionOwnership`):
 * - `group`: the consumer group above. Every join and every death stops the whole group, and a
 *   dead member's partitions wait for the session timeout: a crash-looping worker keeps the group
 *   in rebalances (issue 22).
 * - `presence` (once the worker hands over its store's membership, {@link shareRunQueue}): each
 *   member computes its partitions from the live workers (partition-ownership.ts) and reads them
 *   with a partition reader of its own, outside any group, committing positions to the group's
 *   offsets as a consumer outside the group does (so lag, backlogDetail and KEDA read them as
 *   before). A change of the member list moves only the partitions that change hands; the others
 *   never stop. Each partition's tenure starts when this member gains it: deliveries of an older
 *   tenure commit nothing, like deliveries of an older generation.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { BatonError } from '@baton/core';
import type { Delivery, FetchOptions, RunQueueMembership } from '@baton/core/adapter';
import type { KafkaLogHook } from './client.js';
import { PartitionOwnership } from './partition-ownership.js';
import { headersOf, PartitionReader } from './partition-reader.js';
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
  /** The partition's tenure when the record was taken ({@link KafkaRunQueue.isCurrent}). */
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
  /** Partition changes so far: group generations joined, or changes of the owned partitions. */
  generation: number;
  /** Partitions of the runs topic this member holds. */
  assignedPartitions: number[];
}

interface Waiter {
  max: number;
  resolve(batch: Delivery[]): void;
}

/** How long one poll of the owned partitions waits on the broker for a first record. */
const OWNED_POLL_WAIT_MS = 250;

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
  /** Per partition held, the generation in which this member took it (its tenure). */
  private readonly tenure = new Map<number, number>();
  private membership: RunQueueMembership | undefined;
  /** Every member id handed over, in order (one per worker that shared this transport). */
  private readonly handedIds: string[] = [];
  /** partitionOwnership 'presence': the member list, the reader and the next offset per partition. */
  private ownership: PartitionOwnership | undefined;
  private ownedReader: PartitionReader | undefined;
  private readonly positions = new Map<number, number>();
  private reading: Promise<void> | undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: ResolvedKafkaOptions,
    private readonly layout: KafkaLayout,
    private readonly partitionCount: number,
    private readonly log: KafkaLogHook | undefined,
    /** Publishes a record (the transport's producer); passOn needs it. */
    private readonly send?: (record: OutgoingRecord) => Promise<unknown>,
    /** Reads committed offsets and watermarks where an owned partition starts. */
    private readonly admin?: Admin,
    /**
     * Commits owned partitions' positions: a connection without long polls (the journal's
     * reader), so a commit never waits behind one.
     */
    private readonly committer?: PartitionReader,
  ) {}

  /**
   * The live workers, from the worker's store; with partitionOwnership 'presence' they, not a
   * consumer group, split the partitions. Only before the first fetch: later it changes nothing.
   */
  shareRunQueue(membership: RunQueueMembership): void {
    // The latest one counts, also once reading: a transport shared by several workers in turn
    // (one stops, the next starts) reads as the live one, never as a member the store has forgotten.
    // The earlier ones still count while the store lists them live: several workers of one
    // process on one transport read all their shares (partition-ownership.ts, invariant 5).
    this.membership = membership;
    if (!this.handedIds.includes(membership.memberId)) this.handedIds.push(membership.memberId);
  }

  /** True while the record's partition is held in the tenure it was taken in. */
  private isCurrent(entry: Entry): boolean {
    return this.tenure.get(entry.partition) === entry.generation;
  }

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
    this.ownership?.stop();
    await this.reading;
    await this.committing.catch(() => undefined);
    // A member outside the group leaves nothing to hand over: the others take its partitions once
    // its presence is gone.
    await this.ownedReader?.disconnect().catch(() => undefined);
    // Leaving the group hands its partitions to the other members at once; un-acked records are
    // read again by their new owners from the committed offsets.
    await this.consumer?.disconnect().catch(() => undefined);
  }

  // ---------------------------------------------------------------------------------------------

  private start(): void {
    if (this.starting !== undefined || this.closed) return;
    if (this.options.partitionOwnership === 'presence' && this.membership !== undefined) {
      this.startOwned(this.membership);
      return;
    }
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
    this.tenure.clear();
    for (const partition of this.assigned) this.tenure.set(partition, this.generation);
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

  // --- partitionOwnership 'presence' ------------------------------------------------------------

  private startOwned(membership: RunQueueMembership): void {
    // A reader of its own: its long polls hold their broker connection, and journal tails must
    // not wait behind them.
    const reader = new PartitionReader(this.kafka, [this.layout.runsTopic]);
    this.ownedReader = reader;
    // Asked through the queue, so a later shareRunQueue takes effect at the next refresh.
    const latest = (): RunQueueMembership => this.membership ?? membership;
    const current: RunQueueMembership = {
      get memberId() {
        return latest().memberId;
      },
      members: (refreshMs) => latest().members(refreshMs),
    };
    const ownership = new PartitionOwnership(
      current,
      this.partitionCount,
      this.options.ownershipRefreshMs,
      (owned, members) => this.ownershipChanged(owned, members),
      this.log,
      () => this.handedIds,
    );
    this.ownership = ownership;
    this.starting = (async () => {
      await reader.connect();
      await ownership.start();
      this.reading = this.readOwned(reader);
    })();
    this.starting.catch((err: unknown) => {
      this.log?.('error', 'kafka run-queue reader failed to start', { error: String(err) });
      // A later fetch tries again.
      ownership.stop();
      if (this.ownedReader === reader) {
        this.ownedReader = undefined;
        this.ownership = undefined;
        this.starting = undefined;
      }
      void reader.disconnect().catch(() => undefined);
    });
  }

  /**
   * The owned partitions changed: lost ones are dropped at once (their buffered records, their
   * pending offsets; acks of their deliveries commit nothing), gained ones start a tenure and are
   * read from the group's committed offset.
   */
  private ownershipChanged(owned: number[], members: string[]): void {
    this.generation++;
    const generation = this.generation;
    const gained = owned.filter((p) => !this.tenure.has(p));
    const lost = [...this.tenure.keys()].filter((p) => !owned.includes(p));
    for (const partition of lost) {
      this.tenure.delete(partition);
      this.partitions.delete(partition);
      this.positions.delete(partition);
    }
    if (lost.length > 0) {
      const kept = this.buffer.filter((entry) => this.tenure.has(entry.partition));
      this.buffer.length = 0;
      this.buffer.push(...kept);
    }
    for (const partition of gained) this.tenure.set(partition, generation);
    this.assigned = [...owned];
    this.log?.('info', 'kafka run-queue partitions owned', {
      generation,
      partitions: this.assigned,
      gained,
      lost,
      members: members.length,
    });
    if (gained.length > 0) void this.startPositions(gained, generation);
  }

  /** Where each gained partition starts: the group's committed offset, else its low watermark. */
  private async startPositions(gained: number[], generation: number): Promise<void> {
    for (let attempt = 1; !this.closed; attempt++) {
      const still = gained.filter((p) => this.tenure.get(p) === generation);
      if (still.length === 0) return;
      try {
        if (this.admin === undefined) throw new Error('no admin client');
        const [committed, watermarks] = await Promise.all([
          this.admin.fetchOffsets({ groupId: this.layout.groupId, topics: [this.layout.runsTopic] }),
          this.admin.fetchTopicOffsets(this.layout.runsTopic),
        ]);
        const done = new Map<number, number>();
        for (const topic of committed)
          for (const p of topic.partitions) done.set(p.partition, Number(p.offset));
        for (const { partition, low, high } of watermarks) {
          if (this.tenure.get(partition) !== generation || !still.includes(partition)) continue;
          const at = done.get(partition);
          // A committed offset outside the log (retention passed it, or the topic is new) reads
          // from the log's start, as the consumer group does with fromBeginning.
          const inLog = at !== undefined && at >= Number(low) && at <= Number(high);
          const start = inLog ? at : Number(low);
          this.partitions.set(partition, { pending: new Set(), next: start, committed: start });
          this.positions.set(partition, start);
        }
        return;
      } catch (err) {
        // The partitions stay unread meanwhile; they go on being tried while this member holds them.
        this.log?.('warn', 'kafka run-queue: reading where gained partitions start failed; trying again', {
          partitions: still,
          attempt,
          error: String(err),
        });
        await sleep(Math.min(2_000, 100 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  /**
   * Reads every owned partition with a known position, one long poll at a time, into the buffer;
   * waits while the buffer is full. A failed poll is logged and tried again after a pause that
   * grows to 2 s; the queue's ack wait and the store keep every record safe meanwhile.
   */
  private async readOwned(reader: PartitionReader): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      if (this.paused || this.positions.size === 0) {
        await sleep(Math.min(100, this.options.ownershipRefreshMs));
        continue;
      }
      const asked = new Map(this.positions);
      try {
        const fetched = await reader.pollMany(this.layout.runsTopic, asked, OWNED_POLL_WAIT_MS);
        if (failures > 0) this.log?.('info', 'kafka run-queue reads again', { failures });
        failures = 0;
        for (const [partition, { records, next }] of fetched) {
          // Moved away, or moved away and back, while the poll ran: its new tenure reads it.
          if (this.closed || this.positions.get(partition) !== asked.get(partition)) continue;
          let upTo = next;
          for (const record of records) {
            if (this.buffer.length >= this.options.maxBufferedMessages) {
              this.pause();
              upTo = record.offset; // the rest is read again after resume
              break;
            }
            this.take1(partition, record);
          }
          this.positions.set(partition, upTo);
        }
      } catch (err) {
        if ((err as Error).name === 'KafkaJSOffsetOutOfRange') {
          // Retention removed records below the committed offset: start again where the log starts.
          const partition = (err as { partition?: number }).partition;
          this.log?.(
            'warn',
            "kafka run-queue: an owned partition's offset is out of range; reading from its start",
            {
              partition,
            },
          );
          if (partition !== undefined && this.tenure.has(partition)) {
            this.positions.delete(partition);
            this.partitions.delete(partition);
            const generation = ++this.generation;
            this.tenure.set(partition, generation);
            void this.startPositions([partition], generation);
          }
          continue;
        }
        failures++;
        if (failures === 1 || failures % 20 === 0) {
          this.log?.('warn', 'kafka run-queue: reading owned partitions failed; trying again', {
            failures,
            error: String(err),
          });
        }
        await reader.refreshMetadata().catch(() => undefined);
        await sleep(Math.min(2_000, 50 * 2 ** Math.min(failures, 6)));
      }
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
      this.take1(batch.partition, {
        offset: Number(message.offset),
        headers: headersOf(message.headers as Parameters<typeof headersOf>[0]),
        value: message.value,
      });
      resolveOffset(message.offset);
    }
    await heartbeat();
  }

  private take1(
    partition: number,
    message: { offset: number; headers: Record<string, string>; value: Buffer | null },
  ): void {
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
      const offsets: Array<{ topic: string; partition: number; offset: string }> = [];
      for (const [partition, state] of this.partitions) {
        let low = state.next;
        for (const offset of state.pending) if (offset < low) low = offset;
        if (low > state.committed) {
          offsets.push({ topic: this.layout.runsTopic, partition, offset: String(low) });
          state.committed = low;
        }
      }
      if (offsets.length === 0) return;
      try {
        if (this.ownedReader !== undefined) {
          await (this.committer ?? this.ownedReader).commitOffsets(
            this.layout.groupId,
            this.layout.runsTopic,
            offsets.map((o) => ({ partition: o.partition, offset: Number(o.offset) })),
          );
        } else if (this.consumer !== undefined) {
          await this.consumer.commitOffsets(offsets);
        } else return;
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
