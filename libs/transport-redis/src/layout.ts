/**
 * The key layout. Every key starts with the transport's prefix and a fixed segment no other
 * segment starts with, and variable parts (run ids, log names) come last, so no two kinds of key
 * collide, and a prefix's keys are exactly those matching `<prefix>:*`.
 *
 * Keys carry no Redis Cluster hash tags: a single primary is supported, as for the Redis store.
 */
export interface RedisLayout {
  readonly prefix: string;
  /** BullMQ's prefix (the transport's) and queue name: its keys are `<prefix>:runs:*`. */
  readonly queueName: string;
  /** BullMQ's ZSET that marks a job available or a delayed job due (marker-watch.ts). */
  readonly queueMarker: string;
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
  return {
    prefix,
    queueName: 'runs',
    queueMarker: `${prefix}:runs:marker`,
    journal: (runId) => `${prefix}:journal:${runId}`,
    groupLog: (log) => `${prefix}:group:${log}`,
    deadLetters: `${prefix}:dlq`,
    everything: `${prefix}:*`,
  };
}
