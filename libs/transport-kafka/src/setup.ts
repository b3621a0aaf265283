/**
 * Creates the transport's topics if missing and reads the partition counts it must use. Safe to
 * run from many workers at once: a topic another worker created first is simply found.
 */
import type { Admin } from 'kafkajs';
import { ConfigError } from '@baton/core';
import type { RunPriority } from '@baton/core/adapter';
import { kafkaTopicConflict } from './errors.js';
import type { KafkaLayout } from './layout.js';
import type { ResolvedKafkaOptions } from './options.js';

export interface TopicLayout {
  runsPartitions: number;
  /** The partitions of each priority lane's topic (`normal`: {@link runsPartitions}). */
  lanePartitions: Record<RunPriority, number>;
  journalPartitions: number;
  groupPartitions: number;
}

export async function ensureTopics(
  admin: Admin,
  options: ResolvedKafkaOptions,
  layout: KafkaLayout,
): Promise<TopicLayout> {
  const lanes = layout.runLanes;
  const wanted = [
    { topic: layout.runsTopic, numPartitions: options.partitions },
    // The priority lanes' topics, when on (docs/priorities.md); the runs topic is the `normal` lane.
    ...(options.priorityLanes
      ? [
          { topic: lanes.high.topic, numPartitions: options.partitions },
          { topic: lanes.low.topic, numPartitions: options.partitions },
        ]
      : []),
    { topic: layout.journalTopic, numPartitions: options.partitions },
    // Created in either journal mode, so a fleet can switch BATON_JOURNAL without new ACLs or a
    // restart with Create rights; it stays empty while no worker runs in mode group.
    { topic: layout.groupTopic, numPartitions: options.partitions },
    { topic: layout.dlqTopic, numPartitions: 1 },
  ];
  const existing = new Set(await admin.listTopics());
  const missing = wanted.filter((t) => !existing.has(t.topic));
  if (missing.length > 0) {
    await checkBrokerCount(admin, options);
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((t) => ({
        ...t,
        replicationFactor: options.replicationFactor,
        configEntries: [
          { name: 'cleanup.policy', value: 'delete' },
          ...(options.minInsyncReplicas !== undefined
            ? [{ name: 'min.insync.replicas', value: String(options.minInsyncReplicas) }]
            : []),
          { name: 'max.message.bytes', value: String(Math.max(options.maxMessageBytes + 1024, 1_048_588)) },
          // The journal's only retention: Kafka cannot purge one run's records (docs/retention.md).
          // Group records hold journal entries too, so they keep the same.
          ...((t.topic === layout.journalTopic || t.topic === layout.groupTopic) &&
          options.journalRetentionMs !== undefined
            ? [{ name: 'retention.ms', value: String(options.journalRetentionMs) }]
            : []),
        ],
      })),
    });
  }
  const { topics } = await admin.fetchTopicMetadata({ topics: wanted.map((t) => t.topic) });
  const count = (topic: string): number => topics.find((t) => t.name === topic)?.partitions.length ?? 0;
  const layoutFound = {
    runsPartitions: count(layout.runsTopic),
    lanePartitions: {
      high: count(lanes.high.topic),
      normal: count(layout.runsTopic),
      low: count(lanes.low.topic),
    },
    journalPartitions: count(layout.journalTopic),
    groupPartitions: count(layout.groupTopic),
  };
  for (const t of wanted) {
    if (count(t.topic) === 0) {
      throw kafkaTopicConflict(
        `kafka transport: topic ${t.topic} has no partitions after creation; check the broker's logs`,
      );
    }
  }
  if (count(layout.dlqTopic) !== 1) {
    throw kafkaTopicConflict(
      `kafka transport: topic ${layout.dlqTopic} has ${count(layout.dlqTopic)} partitions; dead letters need exactly 1 to keep their order. Delete the topic (or choose another prefix) and let the transport create it`,
    );
  }
  return layoutFound;
}

/**
 * A replication factor above the number of live brokers makes the broker refuse the topic with
 * INVALID_REPLICATION_FACTOR, which names neither the factor nor the brokers: say both here.
 */
async function checkBrokerCount(admin: Admin, options: ResolvedKafkaOptions): Promise<void> {
  if (options.replicationFactor === -1) return;
  const { brokers } = await admin.describeCluster();
  if (brokers.length < options.replicationFactor) {
    throw new ConfigError(
      `kafka transport: replicationFactor ${options.replicationFactor} needs at least ${options.replicationFactor} brokers, but the cluster at ${options.displayBrokers} has ${brokers.length} registered (${brokers.map((b) => `${b.nodeId}@${b.host}:${b.port}`).join(', ')}); lower BATON_KAFKA_REPLICATION_FACTOR (replicationFactor) or start the missing brokers`,
    );
  }
}

/** Every topic and consumer group a prefix's transport creates or uses. */
export function namesOf(layout: KafkaLayout): { topics: string[]; groups: string[] } {
  const lanes = Object.values(layout.runLanes);
  return {
    topics: [...lanes.map((lane) => lane.topic), layout.journalTopic, layout.groupTopic, layout.dlqTopic],
    groups: lanes.map((lane) => lane.groupId),
  };
}

/** Deletes every topic of a prefix (tests, and `baton` tooling resetting an environment). */
export async function deleteTopics(admin: Admin, layout: KafkaLayout): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const { topics, groups } = namesOf(layout);
  const present = topics.filter((t) => existing.has(t));
  if (present.length > 0) await admin.deleteTopics({ topics: present, timeout: 10_000 });
  await admin.deleteGroups(groups).catch(() => undefined);
}
