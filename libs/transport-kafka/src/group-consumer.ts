/**
 * The Kafka run queue's ownership mode `group` (run-queue.ts chooses it): this member is a
 * consumer of the workers' consumer group, which assigns it its partitions of the runs topic; the
 * records kafkajs fetches go into the shared buffer (run-buffer.ts).
 *
 * - A rebalance (GROUP_JOIN) starts a new generation: every partition assigned starts a tenure, the
 *   buffer is dropped, pending offsets are forgotten, and kafkajs fetches every assigned partition
 *   again from its committed offset. Acks of older deliveries commit nothing.
 * - A full buffer pauses the runs topic (kafkajs stops fetching it), and a batch stops at the first
 *   record the buffer did not take: kafkajs fetches the rest again from the last resolved offset
 *   after resume.
 * - Offsets are committed through the consumer.
 * - Every join and every death stops the whole group, and a dead member's partitions wait for the
 *   session timeout: a crash-looping worker keeps the group in rebalances (issue 22), which the
 *   mode `presence` (presence-reader.ts) avoids.
 */
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { KafkaLogHook } from './client.js';
import type { KafkaLayout } from './layout.js';
import { headersOf } from './partition-reader.js';
import type { PartitionFeed, RunBuffer } from './run-buffer.js';

export class GroupConsumer implements PartitionFeed {
  private readonly consumer: Consumer;
  private readonly layout: KafkaLayout;
  private readonly log: KafkaLogHook | undefined;

  /**
   * Makes the consumer (no connection yet: {@link start}) of the lane whose buffer it fills, and
   * follows its group's rebalances.
   */
  constructor(
    kafka: Kafka,
    private readonly buffer: RunBuffer,
  ) {
    const { options, layout, log } = buffer;
    this.layout = layout;
    this.log = log;
    const consumer = kafka.consumer({
      groupId: layout.groupId,
      sessionTimeout: options.sessionTimeoutMs,
      rebalanceTimeout: Math.max(options.sessionTimeoutMs, 10_000),
      heartbeatInterval: options.heartbeatIntervalMs,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 250,
      retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 2_000 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      this.newGeneration(event.payload.memberAssignment[layout.runsTopic] ?? []);
    });
    consumer.on(consumer.events.CRASH, (event) => {
      log?.('error', 'kafka run-queue consumer crashed', {
        error: String(event.payload.error),
        restart: event.payload.restart,
      });
    });
  }

  /** Joins the group and runs the consumer; a failure is logged and the consumer disconnected. */
  start(): Promise<void> {
    const started = (async () => {
      await this.consumer.connect();
      await this.consumer.subscribe({ topic: this.layout.runsTopic, fromBeginning: true });
      await this.consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.buffer.partitionCount,
        eachBatch: (payload) => this.accept(payload),
      });
    })();
    started.catch((err: unknown) => {
      this.log?.('error', 'kafka run-queue consumer failed to start', { error: String(err) });
      void this.consumer.disconnect().catch(() => undefined);
    });
    return started;
  }

  pause(): void {
    this.consumer.pause([{ topic: this.layout.runsTopic }]);
  }

  resume(): void {
    this.consumer.resume([{ topic: this.layout.runsTopic }]);
  }

  async commit(offsets: ReadonlyArray<{ partition: number; offset: number }>): Promise<void> {
    await this.consumer.commitOffsets(
      offsets.map(({ partition, offset }) => ({
        topic: this.layout.runsTopic,
        partition,
        offset: String(offset),
      })),
    );
  }

  /** Nothing to stop before the last commits: they go through the consumer. */
  async stop(): Promise<void> {}

  /**
   * Leaving the group hands its partitions to the other members at once; un-acked records are read
   * again by their new owners from the committed offsets.
   */
  async disconnect(): Promise<void> {
    await this.consumer.disconnect().catch(() => undefined);
  }

  private newGeneration(assigned: number[]): void {
    const buffer = this.buffer;
    buffer.generation++;
    buffer.assigned = [...assigned].sort((a, b) => a - b);
    buffer.tenure.clear();
    for (const partition of buffer.assigned) buffer.tenure.set(partition, buffer.generation);
    this.log?.('info', 'kafka run-queue partitions assigned', {
      generation: buffer.generation,
      partitions: buffer.assigned,
    });
    buffer.entries.length = 0;
    buffer.partitions = new Map();
    buffer.resume();
  }

  private async accept(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, isRunning, isStale, heartbeat } = payload;
    const buffer = this.buffer;
    const generation = buffer.generation;
    for (const message of batch.messages) {
      if (!isRunning() || isStale() || buffer.closed || generation !== buffer.generation) return;
      const taken = buffer.offer(batch.partition, {
        offset: Number(message.offset),
        headers: headersOf(message.headers as Parameters<typeof headersOf>[0]),
        value: message.value,
      });
      // Full: the rest is fetched again from the last resolved offset after resume.
      if (!taken) break;
      resolveOffset(message.offset);
    }
    await heartbeat();
  }
}
