/**
 * The store through Redis Sentinel, on a primary, a replica and three sentinels of this file's
 * own (real processes): the whole store conformance suite with the replication guard on, then
 * the guard itself: a write the replica did not confirm is refused, and an epoch handed out
 * before the primary was SIGKILLed is never handed out again by the replica Sentinel promoted.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeStoreConformance } from '@baton/testing';
import {
  endThroughSentinelRace,
  pingWithin,
  startRedisCluster,
  type RedisCluster,
  type RedisClusterPorts,
} from '@baton/testing/clusters';
import type { Store } from '@baton/core/adapter';
import { redisStore, type RedisStoreOptions } from './index.js';
import { damageRedisCheckpoint } from './damage.spec-helper.js';
import { createConnection } from './connection.js';
import { resolveRedisStoreOptions } from './options.js';

/** Apart from the worker's cluster spec, which may run at the same time. */
const PORTS: RedisClusterPorts = { data: [16384, 16385], sentinels: [26386, 26387, 26388] };
const URL = `redis+sentinel://${PORTS.sentinels.map((p) => `127.0.0.1:${p}`).join(',')}/baton`;

let cluster: RedisCluster | undefined;
beforeAll(async () => {
  cluster = await startRedisCluster({ ports: PORTS });
  expect(cluster.url).toBe(URL);
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

const prefixOf = new WeakMap<Store, string>();
const sentinelStore = (options: RedisStoreOptions = {}): Store => {
  const keyPrefix = `t-${randomUUID()}:`;
  const store = redisStore({ url: URL, keyPrefix, ...options });
  prefixOf.set(store, keyPrefix);
  return store;
};

/** The current primary's own redis:// URL, for writing behind the store's back. */
async function primaryUrl(): Promise<string> {
  const node = await cluster!.primaryNode();
  return `redis://127.0.0.1:${PORTS.data[node - 1]}`;
}

describeStoreConformance('redis+sentinel', () => sentinelStore(), {
  damage: async (store, runId, seq, damage) =>
    damageRedisCheckpoint(await primaryUrl(), prefixOf.get(store)!, runId, seq, damage),
  pair: () => {
    const keyPrefix = `t-${randomUUID()}:`;
    return [redisStore({ url: URL, keyPrefix }), redisStore({ url: URL, keyPrefix })];
  },
});

describe('redis store: the replication guard behind Sentinel', () => {
  it('refuses a lease claim its replica did not confirm, naming the cause, and claims once the replica answers', async () => {
    const c = cluster!;
    const store = sentinelStore({ waitTimeoutMs: 300 });
    try {
      await store.connect();
      const replica = (await c.primaryNode()) === 1 ? 2 : 1;
      await c.signal(replica, 'SIGSTOP');
      let refused: unknown;
      try {
        refused = await store.leases.acquire('run-a', 'worker-a', 5_000).catch((err: unknown) => err);
      } finally {
        await c.signal(replica, 'SIGCONT');
      }
      expect(refused).toMatchObject({ code: 'BATON_REDIS_NOT_REPLICATED', retryable: true });
      expect((refused as Error).message).toContain(
        'only 0 of the required 1 replicas confirmed it within 300 ms',
      );
      // Nothing was acted on under the refused claim; a later claim of another run goes through.
      const later = await store.leases.acquire('run-b', 'worker-a', 5_000);
      expect(later).toMatchObject({ ok: true, epoch: 1 });
    } finally {
      await store.close();
    }
  });

  it('never hands out an epoch again after the primary that granted it is SIGKILLed and its replica promoted', async () => {
    const c = cluster!;
    const first = sentinelStore();
    const keyPrefix = prefixOf.get(first)!;
    const second = redisStore({ url: URL, keyPrefix });
    try {
      await first.connect();
      // Claims right up to the kill: the last ones are the most likely to be unreplicated.
      const granted = new Map<string, number>();
      for (let i = 0; i < 50; i++) {
        const result = await first.leases.acquire(`run-${i}`, 'worker-a', 1_000);
        if (result.ok) granted.set(`run-${i}`, result.epoch);
      }
      const primary = await c.primaryNode();
      await c.kill(primary);
      await c.waitForFailover(primary);
      await c.start(primary);
      await sleep(1_100); // every lease expired
      await second.connect();
      for (const [runId, epoch] of granted) {
        const retaken = await second.leases.acquire(runId, 'worker-b', 5_000);
        expect(retaken).toMatchObject({ ok: true, epoch: epoch + 1 });
      }
      expect(granted.size).toBe(50);
    } finally {
      await Promise.allSettled([first.close(), second.close()]);
    }
  }, 90_000);
});

describe('redis store: a connection ioredis ends by itself', () => {
  it('is connected again when a failover announcement ends it mid-reconnect, and stays closed once closed', async () => {
    const connection = createConnection(resolveRedisStoreOptions({ url: URL }));
    await connection.open();
    let closed = false;
    try {
      await endThroughSentinelRace(connection.redis);
      // Before the revival, commands fail as ioredis leaves them: at once, retryable by the caller.
      await expect(connection.redis.ping()).rejects.toThrow('Connection is closed');
      expect(await pingWithin(connection.redis, 10_000)).toBe('PONG');
      await connection.close();
      closed = true;
      // Closing ends it for good: nothing connects it again after the revival's delay.
      await sleep(500);
      expect(connection.redis.status).toBe('end');
    } finally {
      if (!closed) await connection.close();
    }
  });
});
