/**
 * The run queue's backlog on Kafka: the workers' consumer-group lag on the runs topic, summed over
 * its partitions (each partition's high watermark minus the group's committed offset there, or
 * minus its low watermark while the group has committed nothing, since the group reads from the
 * beginning). The transport commits an offset only once every record before it was acked, so the
 * lag also counts records a worker has fetched but not yet claimed, and a record nakked for later.
 */
import type { KafkaContext } from './context.js';

/** Two admin requests (committed offsets, watermarks); undefined if they fail or take longer than `timeoutMs`. */
export async function consumerGroupLag(
  context: KafkaContext,
  timeoutMs: number,
): Promise<number | undefined> {
  const { admin, layout } = context;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  const lag = Promise.all([
    admin.fetchOffsets({ groupId: layout.groupId, topics: [layout.runsTopic] }),
    admin.fetchTopicOffsets(layout.runsTopic),
  ])
    .then(([committed, watermarks]) => {
      const byPartition = new Map<number, number>();
      for (const topic of committed) {
        for (const p of topic.partitions) byPartition.set(p.partition, Number(p.offset));
      }
      let total = 0;
      for (const { partition, high, low } of watermarks) {
        const done = byPartition.get(partition);
        const from = done !== undefined && done >= 0 ? done : Number(low);
        total += Math.max(0, Number(high) - from);
      }
      return total;
    })
    .catch(() => undefined);
  try {
    return await Promise.race([lag, late]);
  } finally {
    clearTimeout(timer);
  }
}
