/** What the parts of an open Kafka transport share. */
import type { Admin } from 'kafkajs';
import type { RunPriority } from '@baton/core/adapter';
import type { GroupReads } from './group-reads.js';
import type { KafkaLayout } from './layout.js';
import type { ResolvedKafkaOptions } from './options.js';
import type { PartitionReader } from './partition-reader.js';
import type { BatchingProducer } from './producer.js';
import type { KafkaRunQueue } from './run-queue.js';
import type { TopicLayout } from './setup.js';
import type { TailReads } from './tail-reads.js';

export interface KafkaContext {
  options: ResolvedKafkaOptions;
  layout: KafkaLayout;
  topics: TopicLayout;
  admin: Admin;
  producer: BatchingProducer;
  reader: PartitionReader;
  /** Journal tail reads, coalesced per partition. */
  tails: TailReads;
  /** Group record reads by offset, coalesced per partition of the group topic. */
  groupReads: GroupReads;
  /** The `normal` lane's queue: the runs topic as before priorities. */
  queue: KafkaRunQueue;
  /** The queue of each priority lane in use (`normal` is {@link queue}; the others with `priorityLanes`). */
  queues: Partial<Record<RunPriority, KafkaRunQueue>>;
}

/**
 * Runs `work` on the open transport's context under `operation` (errors mapped; BATON_CLOSED for a
 * failure once closed); `retryReads` retries retriable broker errors, for work that only reads.
 * The transport hands out two: one that checks for close() first, and one for work whose
 * capability guard has just checked (kafka-transport.ts).
 */
export type KafkaGuard = <T>(
  operation: string,
  retryReads: boolean,
  work: (context: KafkaContext) => Promise<T>,
) => Promise<T>;
