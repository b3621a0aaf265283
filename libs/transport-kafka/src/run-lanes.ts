/**
 * The Kafka transport's run queue as the contract sees it: the priority lanes, each a run queue of
 * its own topic (run-queue.ts), enqueued to by partition and fetched from by the claim cycle
 * (priority-lanes.ts).
 */
import { PayloadTooLargeError } from '@baton/core';
import {
  PriorityLanes,
  laneFor,
  type BacklogDetail,
  type Delivery,
  type EnqueueOptions,
  type FetchOptions,
  type RunPriority,
  type RunQueue,
  type RunQueueMembership,
} from '@baton/core/adapter';
import { consumerGroupLag, consumerGroupLagByPartition } from './backlog.js';
import type { KafkaContext, KafkaGuard } from './context.js';
import { partitionForKey } from './layout.js';
import type { ResolvedKafkaOptions } from './options.js';
import { MSG_ID_HEADER, type KafkaQueueStats } from './run-buffer.js';
import type { KafkaRunQueue } from './run-queue.js';

export class KafkaRunLanes implements RunQueue {
  private roundRobin = 0;
  /** The store's live workers, once the worker handed them over ({@link share}). */
  private membership: RunQueueMembership | undefined;
  /**
   * The priority lanes. Each lane's queue takes from its own in-process buffer, so asking an empty
   * lane costs nothing and every fetch asks every lane.
   */
  private readonly lanes: PriorityLanes;

  /**
   * `entered` runs work on the open transport's context without a closed check: the transport's
   * lifecycle guard wraps these lanes and made it on entry. `guard` checks again, for a lane's fetch,
   * which the claim cycle may start after awaiting another lane, when close() may have come. `peek`
   * gives the context without throwing (undefined before connect()), for the backlog and the
   * stats; `closed` says close() was called.
   */
  constructor(
    private readonly options: ResolvedKafkaOptions,
    private readonly entered: KafkaGuard,
    private readonly guard: KafkaGuard,
    private readonly peek: () => KafkaContext | undefined,
    private readonly closed: () => boolean,
  ) {
    this.lanes = new PriorityLanes({
      high: (o) => this.guard('runQueue.fetch', false, (context) => laneQueue(context, 'high').fetch(o)),
      normal: (o) => this.guard('runQueue.fetch', false, (context) => context.queue.fetch(o)),
      low: (o) => this.guard('runQueue.fetch', false, (context) => laneQueue(context, 'low').fetch(o)),
    });
  }

  /** The membership handed over so far, for the lanes' queues made at connect(). */
  get sharedMembership(): RunQueueMembership | undefined {
    return this.membership;
  }

  /** Ends waiting fetches (the transport is closing). */
  close(): void {
    this.lanes.close();
  }

  enqueue(data: Uint8Array, options: EnqueueOptions = {}): Promise<void> {
    return this.entered('runQueue.enqueue', false, async (context) => {
      if (data.byteLength > this.options.maxMessageBytes) {
        throw new PayloadTooLargeError('run message', data.byteLength, this.options.maxMessageBytes);
      }
      const priority = laneFor(
        options.priority,
        this.options.priorityLanes,
        'kafka transport: enqueue',
        'priorityLanes (BATON_KAFKA_PRIORITY_LANES=true)',
      );
      const headers: Record<string, string> = { ...options.headers };
      if (options.msgId !== undefined) headers[MSG_ID_HEADER] = options.msgId;
      await context.producer.send({
        topic: context.layout.runLanes[priority].topic,
        partition: this.partitionFor(context, options, priority),
        key: options.key ?? null,
        value: Buffer.from(data),
        headers,
      });
    });
  }

  /**
   * The store's live workers, handed over by the worker before its first fetch: with
   * `partitionOwnership: 'presence'` (the default) they split the runs topic's partitions, and no
   * consumer group is joined (presence-reader.ts, partition-ownership.ts).
   */
  share(membership: RunQueueMembership): void {
    this.membership = membership;
    const queues = this.peek()?.queues;
    if (queues !== undefined) for (const queue of Object.values(queues)) queue?.shareRunQueue(membership);
  }

  /** The `normal` lane's run queue state in this process (zeros before connect()). */
  stats(): KafkaQueueStats {
    return (
      this.peek()?.queue.stats() ?? {
        buffered: 0,
        pendingOffsets: 0,
        paused: false,
        generation: 0,
        assignedPartitions: [],
      }
    );
  }

  private partitionFor(context: KafkaContext, options: EnqueueOptions, priority: RunPriority): number {
    const count = context.topics.lanePartitions[priority];
    if (options.local) {
      const mine = laneQueue(context, priority).localPartitions;
      if (mine.length > 0) {
        const keyed = options.key === undefined ? -1 : partitionForKey(options.key, count);
        return mine.includes(keyed) ? keyed : mine[this.roundRobin++ % mine.length]!;
      }
    }
    // Same key, same partition: ordered. Copies of one msgId also share a partition, so the
    // first one enqueued is the one delivered and its copies are dropped.
    const key = options.key ?? options.msgId;
    if (key !== undefined) return partitionForKey(key, count);
    return this.roundRobin++ % count;
  }

  /** The workers' consumer-group lag on the run lanes' topics (backlog.ts says what it counts). */
  async backlog(timeoutMs: number): Promise<number | undefined> {
    const context = this.peek();
    return context === undefined || this.closed() ? undefined : consumerGroupLag(context, timeoutMs);
  }

  /** The same lag per partition of the lanes' topics (backlog.ts); no `ackPending` on Kafka. */
  async backlogDetail(timeoutMs: number): Promise<BacklogDetail | undefined> {
    const context = this.peek();
    return context === undefined || this.closed()
      ? undefined
      : consumerGroupLagByPartition(context, timeoutMs);
  }

  /**
   * Takes from the priority lanes by the claim cycle (priority-lanes.ts), or, without
   * `priorityLanes`, from the runs topic alone as before priorities.
   */
  fetch(options: FetchOptions): Promise<Delivery[]> {
    if (!this.options.priorityLanes) {
      return this.entered('runQueue.fetch', false, (context) => context.queue.fetch(options));
    }
    return this.entered('runQueue.fetch', false, async () => this.lanes.fetch(options));
  }
}

/** The queue of a lane in use (enqueue and fetch reach a lane only when `priorityLanes` is on). */
export function laneQueue(context: KafkaContext, level: RunPriority): KafkaRunQueue {
  const queue = context.queues[level];
  if (queue === undefined) throw new Error(`kafka transport: the ${level} lane is not in use`);
  return queue;
}
