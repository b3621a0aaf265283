/**
 * The key layout. Every key starts with the transport's prefix and a fixed segment no other
 * segment starts with, and variable parts (run ids, log names) come last, so no two kinds of key
 * collide, and a prefix's keys are exactly those matching `<prefix>:*`.
 *
 * Keys carry no Redis Cluster hash tags: a single primary is supported, as for the Redis store.
 */
import type { RunPriority } from '@baton/core/adapter';

/** One lane of the run queue: a BullMQ queue, its keys `<prefix>:<queueName>:*`. */
export interface RunLaneLayout {
  /** BullMQ's queue name. */
  readonly queueName: string;
  /** BullMQ's ZSET that marks a job available or a delayed job due (marker-watch.ts). */
  readonly queueMarker: string;
}

export interface RedisLayout {
  readonly prefix: string;
  /** BullMQ's prefix (the transport's) and queue name: its keys are `<prefix>:runs:*`. */
  readonly queueName: string;
  /** BullMQ's ZSET that marks a job available or a delayed job due (marker-watch.ts). */
  readonly queueMarker: string;
  /**
   * The run queue's lane of each priority level (docs/priorities.md): `normal` is the queue above
   * (`runs`); `high` and `low` are the queues `runs-high` and `runs-low`, kept only with the
   * transport's `priorityLanes`.
   */
  readonly runLanes: Readonly<Record<RunPriority, RunLaneLayout>>;
  /** STREAM of one run's journal records, ids `0-<position>`. */
  journal(runId: string): string;
  /** STREAM of one group log's records, ids `0-<position>`. */
  groupLog(log: string): string;
  /** STREAM of dead letters, ids `0-<n>`, never reused. */
  readonly deadLetters: string;
  /** Every key of the prefix, as a SCAN MATCH pattern (the prefix has no pattern characters). */
  readonly everything: string;
}

export function layoutFor(prefix: string): RedisLayout {
  const lane = (queueName: string): RunLaneLayout => ({
    queueName,
    queueMarker: `${prefix}:${queueName}:marker`,
  });
  return {
    prefix,
    queueName: 'runs',
    queueMarker: `${prefix}:runs:marker`,
    runLanes: { high: lane('runs-high'), normal: lane('runs'), low: lane('runs-low') },
    journal: (runId) => `${prefix}:journal:${runId}`,
    groupLog: (log) => `${prefix}:group:${log}`,
    deadLetters: `${prefix}:dlq`,
    everything: `${prefix}:*`,
  };
}
