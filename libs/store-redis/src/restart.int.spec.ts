/**
 * Outages on a private redis-server (append-only file, so a restart keeps the data): the store
 * reconnects by itself, operations during the outage fail instead of hanging, later ones work,
 * and a worker's presence is recorded again after its connection comes back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Checkpoint, PresenceStore, Store, StoreDataLoss } from '@baton/core/adapter';
import { startPrivateRedis, type PrivateServer } from '@baton/testing/servers';
import { redisStore } from './index.js';

/** Retries `check` until it passes: reconnecting takes a few backoff steps, of unknown length. */
async function eventually<T>(check: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe('redis store: server restarts', () => {
  let server: PrivateServer;
  const stores: Store[] = [];
  const open = async (
    keyPrefix: string,
    presenceGraceMs?: number,
  ): Promise<Store & { readonly presence: PresenceStore }> => {
    const store = redisStore({
      url: server.url,
      keyPrefix,
      connectTimeoutMs: 2_000,
      ...(presenceGraceMs !== undefined && { presenceGraceMs }),
    });
    stores.push(store);
    await store.connect();
    return store;
  };

  beforeAll(async () => {
    server = await startPrivateRedis();
  });
  afterAll(async () => {
    await Promise.allSettled(stores.map((s) => s.close()));
    await server?.dispose();
  });

  it('reconnects after a restart, keeps the data, and lists the worker as live again', async () => {
    const store = await open('restart:');
    const observer = await open('restart:');
    await store.presence.register('worker-a');
    const runId = 'run-restart';
    await store.runs.create({ runId, workflow: 'w', version: 1, input: { n: 1 }, idempotencyKey: null });
    const claimed = await store.leases.acquire(runId, 'worker-a', 60_000);
    if (!claimed.ok) throw new Error('could not claim the run');
    const checkpoint: Checkpoint = {
      runId,
      seq: 1,
      epoch: claimed.epoch,
      journalPosition: 3,
      entries: [],
      status: 'running',
      schemaVersion: 1,
      createdAt: 1_700_000_000_000,
    };
    await store.checkpoints.write(checkpoint);

    await server.stop();
    await expect(store.runs.get(runId)).rejects.toMatchObject({
      name: 'RedisUnavailableError',
      code: 'BATON_REDIS_UNAVAILABLE',
      retryable: true,
    });
    await server.restart();

    const renewed = await eventually(() => store.leases.renew([{ runId, epoch: claimed.epoch }], 60_000));
    expect(renewed).toEqual([{ runId, ok: true, cancelRequested: false }]);
    expect(await store.runs.get(runId)).toMatchObject({ status: 'running', attempts: 1, input: { n: 1 } });
    expect(await store.checkpoints.load(runId)).toEqual(checkpoint);
    await eventually(async () => expect(await observer.presence.live()).toEqual(['worker-a']));
    expect(await observer.presence.reapDead(10, 60_000)).toEqual([]);
  });

  it('records a worker again when its presence connection reconnects after being forgotten', async () => {
    const store = await open('rerecord:');
    await store.presence.register('worker-b');
    const admin = new Redis(server.port, '127.0.0.1');
    try {
      // What a dead-worker scan does to a worker whose connection was down for a moment.
      await admin.hdel('rerecord:workers', 'worker-b');
      expect(await store.presence.live()).toEqual([]);
      const clients = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'normal'));
      const line = clients.split('\n').find((l) => / name=baton-[0-9a-f]{8}-worker-b /.test(l));
      const id = /^id=(\d+)/.exec(line ?? '')?.[1];
      expect(id).toBeDefined();
      await admin.client('KILL', 'ID', String(id));
      await eventually(async () => expect(await store.presence.live()).toEqual(['worker-b']));
    } finally {
      admin.disconnect();
    }
  });

  it('gives workers registered before a restart time to reconnect, then reaps those that do not', async () => {
    const patient = await open('grace:', 600_000);
    const impatient = await open('grace:', 300);
    const gone = await open('grace:');
    await gone.presence.register('worker-gone');
    const claimed = await gone.leases.acquire('run-gone', 'worker-gone', 600_000);
    expect(claimed).toMatchObject({ ok: true });

    await server.stop();
    await gone.close(); // its presence never comes back
    await server.restart();

    // The record was written on the previous server instance: within the grace period the worker
    // might still be reconnecting, so it is left alone; after it, it is dead.
    expect(await eventually(() => patient.presence.reapDead(10, 60_000))).toEqual([]);
    expect(await eventually(() => impatient.presence.reapDead(10, 60_000).then(nonEmpty))).toEqual([
      'run-gone',
    ]);
    expect(await patient.leases.get('run-gone')).toMatchObject({ owner: null, state: 'held', epoch: 1 });
  });

  it('reports no data loss after a restart that kept the data, and reports keys deleted under it', async () => {
    const store = await open('marker:');
    const losses: StoreDataLoss[] = [];
    store.onDataLoss?.((loss) => losses.push(loss));
    await store.runs.create({
      runId: 'run-kept',
      workflow: 'w',
      version: 1,
      input: null,
      idempotencyKey: null,
    });

    // A new server instance (new run_id) with the same data, as after a failover to a replica.
    await server.restart();
    expect(await eventually(() => store.runs.get('run-kept'))).toMatchObject({ runId: 'run-kept' });
    expect(losses).toEqual([]);

    // The same check, after keys deleted under a running server and a dropped connection.
    const admin = new Redis(server.port, '127.0.0.1');
    try {
      await admin.del('marker:data-marker', 'marker:run:run-kept');
      await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      await eventually(async () => expect(losses).toHaveLength(1));
    } finally {
      admin.disconnect();
    }
    expect(losses[0]).toMatchObject({ store: 'redis' });
    expect(losses[0]?.reason).toMatch(/marker key marker:data-marker is gone; the server did not restart/);
  });
});

async function nonEmpty(runIds: string[]): Promise<string[]> {
  if (runIds.length === 0) throw new Error('nothing reaped yet');
  return runIds;
}
