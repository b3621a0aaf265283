/**
 * The store's per-run operations gathered across runs (batch.ts, lua/batch.lua), on a private
 * redis-server whose command statistics are this file's alone: many runs' claims, cancel closings
 * and finishes go in far fewer script calls than there are operations, each still answers exactly
 * as its own script would, and one that fails fails alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { FencedWriteError, type Store } from '@baton/core/adapter';
import { startPrivateRedis, type PrivateServer } from '@baton/testing/servers';
import { redisStore } from './index.js';

/** Script calls (EVAL + EVALSHA) so far, from INFO commandstats. */
async function scriptCalls(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  const calls = (command: string): number =>
    Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return calls('eval') + calls('evalsha');
}

const RUNS = 120;
const ids = (tag: string) => Array.from({ length: RUNS }, (_, i) => `${tag}-${i}`);

describe('redis store: per-run operations batched across runs', () => {
  let server: PrivateServer;
  let admin: Redis;
  let store: Store;
  const claim = (runId: string, idempotencyKey: string | null = null) =>
    store.runs.createAndLease(
      { runId, workflow: 'w', version: 1, input: { runId }, idempotencyKey },
      'worker-a',
      30_000,
    );

  beforeAll(async () => {
    server = await startPrivateRedis();
    admin = new Redis(server.url);
    store = redisStore({ url: server.url, keyPrefix: 'batch:' });
    await store.connect();
  });

  afterAll(async () => {
    await store?.close();
    admin?.disconnect();
    await server?.stop();
  });

  it('claims many new runs in a few calls, each created running under epoch 1, indexed as running', async () => {
    const before = await scriptCalls(admin);
    const claimed = await Promise.all(ids('claim').map((id) => claim(id)));
    const calls = (await scriptCalls(admin)) - before;
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThanOrEqual(RUNS / 10);
    for (const [i, result] of claimed.entries()) {
      expect(result.created).toBe(true);
      if (!result.created) continue;
      expect(result.run).toMatchObject({
        runId: `claim-${i}`,
        status: 'running',
        attempts: 1,
        input: { runId: `claim-${i}` },
      });
      expect(result.lease).toMatchObject({ ok: true, epoch: 1, cancelRequested: false });
    }
    const counts = await store.runs.count();
    expect(counts.byStatus.running).toBe(RUNS);
    expect(counts.byStatus.pending).toBe(0);
    // A second claim of each finds the run and changes nothing.
    const again = await Promise.all(ids('claim').map((id) => claim(id)));
    expect(again.every((r) => !r.created && r.run.status === 'running')).toBe(true);
  });

  it('answers a claim of a run whose lease exists already by the general path (no fresh lease)', async () => {
    await store.leases.acquire('leased-first', 'worker-b', 30_000);
    const result = await claim('leased-first');
    expect(result.created).toBe(true);
    if (result.created) expect(result.lease).toMatchObject({ ok: false, reason: 'held', owner: 'worker-b' });
  });

  it('closes cancels and finishes many runs in a few calls; a stale epoch is fenced alone', async () => {
    const runs = ids('finish');
    await Promise.all(runs.map((id) => claim(id)));
    await store.control.requestCancel(runs[1]!, 'stop it');

    const before = await scriptCalls(admin);
    const closed = await Promise.all(runs.map((id) => store.control.closeCancels(id, 1)));
    expect(closed[1]).toEqual({ cancelRequested: true, cancelReason: 'stop it' });
    expect(closed.filter((c) => !c.cancelRequested)).toHaveLength(RUNS - 1);
    const finishes = await Promise.allSettled(
      runs.map((id, i) => store.runs.finish(id, i === 7 ? 2 : 1, { status: 'completed', result: i })),
    );
    const calls = (await scriptCalls(admin)) - before;
    expect(calls).toBeLessThanOrEqual((2 * RUNS) / 10);

    const fenced = finishes[7];
    expect(fenced?.status).toBe('rejected');
    if (fenced?.status === 'rejected') expect(fenced.reason).toBeInstanceOf(FencedWriteError);
    expect(finishes.filter((f) => f.status === 'fulfilled')).toHaveLength(RUNS - 1);
    expect(await store.runs.get(runs[3]!)).toMatchObject({ status: 'completed', result: 3 });
    expect(await store.runs.get(runs[7]!)).toMatchObject({ status: 'running' });
    const lease = await store.leases.acquire(runs[3]!, 'worker-c', 30_000);
    expect(lease).toEqual({ ok: false, reason: 'finished' });
  });

  it('fails one operation alone when Redis refuses its command, and the rest of its batch succeeds', async () => {
    const runs = ids('broken');
    await Promise.all(runs.map((id) => claim(id)));
    // The lease of one run is not a hash any more: its script's HMGET fails with WRONGTYPE.
    await admin.del(`batch:lease:${runs[5]}`);
    await admin.set(`batch:lease:${runs[5]}`, 'not a hash');
    const closed = await Promise.allSettled(runs.map((id) => store.control.closeCancels(id, 1)));
    const broken = closed[5];
    expect(broken?.status).toBe('rejected');
    if (broken?.status === 'rejected') {
      expect(broken.reason).toMatchObject({ code: 'BATON_REDIS_COMMAND' });
      expect(String(broken.reason.message)).toContain('WRONGTYPE');
    }
    expect(closed.filter((c) => c.status === 'fulfilled')).toHaveLength(RUNS - 1);
  });
});
