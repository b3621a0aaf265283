/**
 * Names of everything the Kafka transport creates, derived from its prefix, and the partition a
 * run's records live on.
 */
import { Partitioners, type PartitionMetadata } from 'kafkajs';
import type { RunPriority } from '@baton/core/adapter';

/** Where the run messages of one priority level wait: a topic and the group reading it. */
export interface RunLane {
  topic: string;
  groupId: string;
}

export interface KafkaLayout {
  /** Run messages (start, resume, wake, signal, cancel), keyed by run id. */
  runsTopic: string;
  /** Journal records, keyed by run id. */
  journalTopic: string;
  /**
   * Group records (group commit across runs, group-log.ts), keyed by log name. A topic of its own:
   * log names and run ids share one alphabet, so on one topic a run could read a log's records.
   */
  groupTopic: string;
  /** Dead letters: one partition, so they keep their order. */
  dlqTopic: string;
  /** The consumer group every worker of this prefix joins. */
  groupId: string;
  /**
   * The lane of each priority level (docs/priorities.md). `normal` is the runs topic and group
   * above, as before priorities; `high` and `low` are `<prefix>.runs.high` / `<prefix>.runs.low`,
   * read (and their positions committed) under the groups `<prefix>-workers-high` / `-low`, so a
   * consumer group never mixes members subscribed to different topics.
   */
  runLanes: Record<RunPriority, RunLane>;
}

/** `layout` as its run queue code sees it for one lane: the lane's topic and group as the runs'. */
export function laneLayout(layout: KafkaLayout, lane: RunLane): KafkaLayout {
  return { ...layout, runsTopic: lane.topic, groupId: lane.groupId };
}

export function layoutFor(prefix: string): KafkaLayout {
  return {
    runsTopic: `${prefix}.runs`,
    journalTopic: `${prefix}.journal`,
    groupTopic: `${prefix}.journal.groups`,
    dlqTopic: `${prefix}.dlq`,
    groupId: `${prefix}-workers`,
    runLanes: {
      high: { topic: `${prefix}.runs.high`, groupId: `${prefix}-workers-high` },
      normal: { topic: `${prefix}.runs`, groupId: `${prefix}-workers` },
      low: { topic: `${prefix}.runs.low`, groupId: `${prefix}-workers-low` },
    },
  };
}

const partitioner = Partitioners.DefaultPartitioner();
const metadataCache = new Map<number, PartitionMetadata[]>();

/**
 * The partition a key maps to among `count`: murmur2 as Kafka's Java client does, so every
 * producer that keys by run id (ours or another language's) agrees on where a run lives.
 */
export function partitionForKey(key: string, count: number): number {
  let metadata = metadataCache.get(count);
  if (metadata === undefined) {
    metadata = Array.from({ length: count }, (_, partitionId) => ({
      partitionId,
      leader: 0,
      partitionErrorCode: 0,
      replicas: [],
      isr: [],
      offlineReplicas: [],
    }));
    metadataCache.set(count, metadata);
  }
  return partitioner({ topic: '', partitionMetadata: metadata, message: { key, value: null } });
}
