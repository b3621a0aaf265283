/**
 * After a failover the promoted replica has run for long, so its uptime cannot start the grace
 * that lets live workers' presence connections reconnect: the dead-worker scan starts it itself,
 * the first time it runs on a new server instance. Simulated on the shared Redis (long up, like a
 * promoted replica) with a worker recorded on another instance, as the old primary recorded it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { redisTestUrl } from '@baton/testing/servers';
import { redisStore } from './index.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const prefixes = testPrefixes(redisTestUrl());
afterAll(() => prefixes.cleanUp());

describe('redis store presence after a failover', () => {
  it('spares a worker recorded on the old primary for presenceGraceMs after the first scan on the new one, then reaps it', async () => {
    const keyPrefix = prefixes.next();
    const graceMs = 1_500;
    const store = redisStore({ url: redisTestUrl(), keyPrefix, presenceGraceMs: graceMs });
    const admin = new Redis(redisTestUrl(), { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await Promise.all([store.connect(), admin.connect()]);
      const lease = await store.leases.acquire('run-1', 'ghost', 60_000);
      expect(lease.ok).toBe(true);
      // The record the old primary held: a client name no connection here carries, another run_id.
      await admin.hset(`${keyPrefix}workers`, 'ghost', 'baton-ghost-client nonce1 0123456789abcdef');

      const first = await store.presence.reapDead(10, 0);
      expect(first).toEqual([]);
      await sleep(graceMs + 200);
      const later = await store.presence.reapDead(10, 0);
      expect(later).toEqual(['run-1']);
    } finally {
      admin.disconnect();
      await store.close();
    }
  });
});
