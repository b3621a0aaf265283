/**
 * Damages a stored checkpoint behind the store's back, as a disk fault or an operator's edit would
 * (the conformance suite's damaged-checkpoint section and the worker specs use it).
 */
import { Redis } from 'ioredis';
import type { CheckpointDamage } from '@baton/testing';

/** Rewrites checkpoint `seq` of `runId` under `keyPrefix` in place (its summary stays). */
export async function damageRedisCheckpoint(
  url: string,
  keyPrefix: string,
  runId: string,
  seq: number,
  damage: CheckpointDamage,
): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const summaries = await redis.lrange(`${keyPrefix}ckpt-sum:${runId}`, 0, -1);
    const index = summaries.map((s) => (JSON.parse(s) as { seq: number }).seq).lastIndexOf(seq);
    if (index < 0) throw new Error(`run ${runId} has no checkpoint ${seq} under ${keyPrefix}`);
    const key = `${keyPrefix}ckpt:${runId}`;
    const body = JSON.parse((await redis.lindex(key, index))!) as Record<string, unknown>;
    let damaged: string;
    if (damage === 'garbage') {
      // A raw control character inside a string: what a flipped byte leaves, and not JSON.
      damaged = JSON.stringify(body).replace('"entries":', '"entries\u0001":');
    } else if (damage === 'entries-not-list') {
      damaged = JSON.stringify({ ...body, entries: { 0: 'not a list' } });
    } else {
      const { status: _status, ...rest } = body;
      damaged = JSON.stringify(rest);
    }
    await redis.lset(key, index, damaged);
  } finally {
    redis.disconnect();
  }
}
