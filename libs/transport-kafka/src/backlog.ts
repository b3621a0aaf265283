/**
 * The run queue's backlog on Kafka: the workers' consumer-group lag on the runs topic, summed over
 * its partitions (each partition's high watermark minus the group's committed offset there, or
 * minus its low watermark while the group has committed nothing, since the group reads from the
 * beginning). The transport commits an offset only once every record before it was acked, so the
 * lag also counts records a worker has fetched but not yet claimed, and a record nakked for later.
 */
import type { BacklogDetail, BacklogPart } from '@baton/core/adapter';
import type { KafkaContext } from './context.js';

/** Two admin requests (committed offsets, watermarks); undefined if they fail or take longer than `timeoutMs`. */
export async function consumerGroupLag(
  context: KafkaContext,
  timeoutMs: number,
): Promise<number | undefined> {
  return (await consumerGroupLagByPartition(context, timeoutMs))?.total;
}

/**
 * The same lag partition by partition (`<runs topic>/<partition>`, by partition number), from the
 * same two admin requests; undefined if they fail or take longer than `timeoutMs`.
 */
export async function consumerGroupLagByPartition(
  context: KafkaContext,
  timeoutMs: number,
): Promise<BacklogDetail | undefined> {
  const { admin, layout } = context;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  const lag = Promise.all([
    admin.fetchOffsets({ groupId: layout.groupId, topics: [layout.runsTopic] }),
    admin.fetchTopicOffsets(layout.runsTopic),
  ])
    .then(([committed, watermarks]): BacklogDetail => {
      const byPartition = new Map<number, number>();
      for (const topic of committed) {
        for (const p of topic.partitions) byPartition.set(p.partition, Number(p.offset));
      }
      const parts: BacklogPart[] = watermarks
        .map(({ partition, high, low }) => {
          const done = byPartition.get(partition);
          const from = done !== undefined && done >= 0 ? done : Number(low);
          return {
            name: `${layout.runsTopic}/${partition}`,
            partition,
            pending: Math.max(0, Number(high) - from),
          };
        })
        .sort((a, b) => a.partition - b.partition);
      return { total: parts.reduce((sum, part) => sum + part.pending, 0), parts };
    })
    .catch(() => undefined);
  try {
    return await Promise.race([lag, late]);
  } finally {
    clearTimeout(timer);
  }
}
