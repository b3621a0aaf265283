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

/** Calls of each command so far, from INFO commandstats (0 for one never called). */
async function commandCalls(admin: Redis, commands: readonly string[]): Promise<Record<string, number>> {
  const info = await admin.info('commandstats');
  return Object.fromEntries(
    commands.map((c) => [c, Number(new RegExp(`^cmdstat_${c}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0)]),
  );
}

/** A claim of a new run on `target` for `owner`; `fieldsOf` gives a run's workflow and idempotency key. */
function claimer(
  target: Store,
  owner: string,
  fieldsOf: (runId: string) => { workflow: string; idempotencyKey: string | null },
) {
  return (runId: string) =>
    target.runs.createAndLease({ runId, version: 1, input: {}, ...fieldsOf(runId) }, owner, 30_000);
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

  it("writes a call's index sets and counts once per key, and they match every run's record", async () => {
    // A store of its own, so the earlier tests' runs are not in its counts.
    const mixed = redisStore({ url: server.url, keyPrefix: 'mixed:' });
    await mixed.connect();
    try {
      const claimIn = claimer(mixed, 'worker-m', (runId) => ({
        workflow: runId.startsWith('a') ? 'wa' : 'wb',
        idempotencyKey: `k-${runId}`,
      }));
      const first = ids('a');
      await Promise.all(first.map(claimIn));
      const commands = ['zadd', 'zrem', 'sadd', 'srem', 'hincrby'] as const;
      const before = await commandCalls(admin, commands);
      // One turn: the claims of 120 new runs and the finishes of the first 120 (a third failed)
      // gather into the same calls.
      const second = ids('b');
      await Promise.all([
        ...second.map(claimIn),
        ...first.map((id, i) =>
          mixed.runs.finish(
            id,
            1,
            i % 3 === 0
              ? { status: 'failed', error: { name: 'E', message: 'no' } }
              : { status: 'completed', result: i },
          ),
        ),
      ]);
      const after = await commandCalls(admin, commands);
      // Run by run, these would be 7 ZADDs per claim and 2 per finish (1,080), 1 SADD per claim,
      // 2 ZREMs and 1 SREM per finish, 2 HINCRBYs per claim and 4 per finish (720).
      expect(after.zadd! - before.zadd!).toBeLessThanOrEqual(40);
      expect(after.zrem! - before.zrem!).toBeLessThanOrEqual(20);
      expect(after.sadd! - before.sadd!).toBeLessThanOrEqual(5);
      expect(after.srem! - before.srem!).toBeLessThanOrEqual(5);
      expect(after.hincrby! - before.hincrby!).toBeLessThanOrEqual(40);

      const failed = first.filter((_, i) => i % 3 === 0);
      const counts = await mixed.runs.count();
      expect(counts.total).toBe(2 * RUNS);
      expect(counts.byStatus).toMatchObject({
        running: RUNS,
        completed: RUNS - failed.length,
        failed: failed.length,
        pending: 0,
      });
      expect(counts.byWorkflow).toEqual({
        wa: { completed: RUNS - failed.length, failed: failed.length },
        wb: { running: RUNS },
      });
      const sorted = (xs: readonly string[]) => [...xs].sort();
      const listed = async (status: 'running' | 'failed') =>
        sorted((await mixed.runs.list({ status, limit: 1_000 })).runs.map((r) => r.runId));
      expect(await listed('running')).toEqual(sorted(second));
      expect(await listed('failed')).toEqual(sorted(failed));
      expect(sorted(await admin.zrange('mixed:held', 0, -1))).toEqual(sorted(second));
      expect(sorted(await admin.smembers('mixed:owner:worker-m'))).toEqual(sorted(second));
      expect(sorted(await admin.zrange('mixed:finished', 0, -1))).toEqual(sorted(first));
      expect(await admin.zcard('mixed:index:keys')).toBe(2 * RUNS);
      for (const id of [first[0]!, first[1]!, second[0]!]) {
        const held = await admin.zscore('mixed:held', id);
        const lease = await admin.hget(`mixed:lease:${id}`, 'exp');
        expect(held).toBe(lease);
      }

      // Finishing the rest empties the running count: its field goes, as a run-by-run finish's would.
      await Promise.all(second.map((id) => mixed.runs.finish(id, 1, { status: 'completed', result: null })));
      expect((await mixed.runs.count()).byStatus.running).toBe(0);
      expect(await admin.hexists('mixed:index:counts', 'status:running')).toBe(0);
      expect(await admin.hexists('mixed:index:counts', 'workflow:running:wb')).toBe(0);
      expect(await admin.zcard('mixed:held')).toBe(0);
      expect(await admin.exists('mixed:owner:worker-m')).toBe(0);
    } finally {
      await mixed.close();
    }
  });

  it('fails every operation of a call whose gathered index key is of the wrong type, and goes on once it is mended', async () => {
    const damaged = redisStore({ url: server.url, keyPrefix: 'damaged:' });
    await damaged.connect();
    try {
      const claimIn = claimer(damaged, 'worker-d', () => ({ workflow: 'w', idempotencyKey: null }));
      await admin.set('damaged:index:all', 'not a sorted set');
      const claims = await Promise.allSettled(['d-1', 'd-2', 'd-3'].map(claimIn));
      for (const claim of claims) {
        expect(claim.status).toBe('rejected');
        if (claim.status === 'rejected') expect(String(claim.reason.message)).toContain('WRONGTYPE');
      }
      await admin.del('damaged:index:all');
      const mended = await claimIn('d-4');
      expect(mended.created).toBe(true);
      expect(await admin.zscore('damaged:index:all', 'd-4')).not.toBeNull();
    } finally {
      await damaged.close();
    }
  });
});
