/**
 * Damages a stored checkpoint behind the store's back, as a disk fault, a restore or an operator's
 * edit would, on the store a worker environment points at (BATON_STORE_URL with its key prefix or
 * schema). Redis keeps checkpoints as text, so its damage is a record that is no longer JSON;
 * Postgres keeps a json column, so its damage is a row whose `entries` is not a list.
 */
import { Redis } from 'ioredis';
import pg from 'pg';

/** Damages checkpoint `seq` of `runId` (its newest copy); the summary the store lists stays. */
export async function damageCheckpoint(
  workerEnv: Record<string, string>,
  runId: string,
  seq: number,
): Promise<void> {
  const url = workerEnv.BATON_STORE_URL!;
  if (url.startsWith('redis')) return damageRedis(url, workerEnv.BATON_REDIS_KEY_PREFIX!, runId, seq);
  return damagePostgres(url, workerEnv.BATON_POSTGRES_SCHEMA!, runId, seq);
}

async function damageRedis(url: string, prefix: string, runId: string, seq: number): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const summaries = await redis.lrange(`${prefix}ckpt-sum:${runId}`, 0, -1);
    const index = summaries.map((s) => (JSON.parse(s) as { seq: number }).seq).lastIndexOf(seq);
    if (index < 0) throw new Error(`run ${runId} has no checkpoint ${seq} under ${prefix}`);
    const key = `${prefix}ckpt:${runId}`;
    // A raw control character inside a key: what a flipped byte leaves, and no longer JSON.
    const body = (await redis.lindex(key, index))!.replace('"entries":', '"entries\u0001":');
    await redis.lset(key, index, body);
  } finally {
    redis.disconnect();
  }
}

async function damagePostgres(url: string, schema: string, runId: string, seq: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const table = `"${schema}".checkpoints`;
    const { rowCount } = await client.query(
      `UPDATE ${table} SET body = jsonb_set(body::jsonb, '{entries}', '"lost"'::jsonb)::json
       WHERE id = (SELECT max(id) FROM ${table} WHERE run_id = $1 AND seq = $2)`,
      [runId, seq],
    );
    if (rowCount !== 1) throw new Error(`run ${runId} has no checkpoint ${seq} in ${schema}`);
  } finally {
    await client.end();
  }
}
