/**
 * The run queue's backlog on Kafka: the workers' consumer-group lag on each priority lane's topic
 * (the runs topic, and `.high`, `.low` with `priorityLanes`), summed over their partitions (each partition's high watermark minus the group's committed offset there, or
 * minus its low watermark while the group has committed nothing, since the group reads from the
 * beginning). The transport commits an offset only once every record before it was acked, so the
 * lag also counts records a worker has fetched but not yet claimed, and a record nakked for later.
 */
import { laneLevels, type BacklogDetail, type BacklogPart } from '@baton/core/adapter';
import type { KafkaContext } from './context.js';
import type { RunLane } from './layout.js';

/** Two admin requests (committed offsets, watermarks); undefined if they fail or take longer than `timeoutMs`. */
export async function consumerGroupLag(
  context: KafkaContext,
  timeoutMs: number,
): Promise<number | undefined> {
  return (await consumerGroupLagByPartition(context, timeoutMs))?.total;
}

/**
 * The same lag partition by partition (`<topic>/<partition>`), from the same two admin requests
 * per priority lane, made together; undefined if one fails or they take longer than `timeoutMs`.
 * The `normal` lane's partitions (the runs topic) come first and are always listed, as before
 * priorities; a `high` or `low` lane's partitions follow only where they hold anything.
 */
export async function consumerGroupLagByPartition(
  context: KafkaContext,
  timeoutMs: number,
): Promise<BacklogDetail | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  // `normal` first (laneLevels lists it first); the others only with `priorityLanes`.
  const lanes = laneLevels(context.options.priorityLanes);
  const lag = Promise.all(lanes.map((priority) => laneLag(context, context.layout.runLanes[priority])))
    .then((found): BacklogDetail => {
      const parts = found.flatMap((laneParts, i) =>
        i === 0 ? laneParts : laneParts.filter((p) => p.pending > 0),
      );
      return { total: parts.reduce((sum, part) => sum + part.pending, 0), parts };
    })
    .catch(() => undefined);
  try {
    return await Promise.race([lag, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** One lane's lag per partition, by partition number. */
async function laneLag(context: KafkaContext, lane: RunLane): Promise<BacklogPart[]> {
  const { admin } = context;
  return Promise.all([
    admin.fetchOffsets({ groupId: lane.groupId, topics: [lane.topic] }),
    admin.fetchTopicOffsets(lane.topic),
  ]).then(([committed, watermarks]): BacklogPart[] => {
    const byPartition = new Map<number, number>();
    for (const topic of committed) {
      for (const p of topic.partitions) byPartition.set(p.partition, Number(p.offset));
    }
    const parts: BacklogPart[] = watermarks
      .map(({ partition, high, low }) => {
        const done = byPartition.get(partition);
        const from = done !== undefined && done >= 0 ? done : Number(low);
        return {
          name: `${lane.topic}/${partition}`,
          partition,
          pending: Math.max(0, Number(high) - from),
        };
      })
      .sort((a, b) => a.partition - b.partition);
    return parts;
  });
}
