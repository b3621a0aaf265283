/**
 * Rate limits through real stores (Redis, Postgres): two workers share one limit through the store's
 * script or function and its clock. The memory spec (worker-rate-limits.spec.ts) counts grants per
 * window exactly; here the workers' activity start times, which trail their grants, must still
 * spread over the windows the limit needs.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { defineActivity, defineRateLimit, defineWorkflow } from '@baton/core';
import type { Store } from '@baton/core/adapter';
import { purgeRedisKeyPrefix, redisStore } from '@baton/store-redis';
import { dropPostgresSchema, postgresStore } from '@baton/store-postgres';
import { postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { fleet, type Fleet } from './fleet.spec-helper.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

const stores: Record<string, () => Store> = {
  redis: () => {
    const keyPrefix = `rate-limits-${randomUUID()}:`;
    cleanups.push(() => purgeRedisKeyPrefix({ url: redisTestUrl(), keyPrefix }));
    return redisStore({ url: redisTestUrl(), keyPrefix });
  },
  postgres: () => {
    const schema = `rate_limits_${randomBytes(5).toString('hex')}`;
    cleanups.push(() => dropPostgresSchema({ url: postgresTestUrl(), schema }));
    return postgresStore({ url: postgresTestUrl(), schema, poolSize: 4 });
  },
};

describe.each(Object.keys(stores))('rate limits on %s', (kind) => {
  it('spreads the attempts of two workers over the windows the limit needs', async () => {
    const store = stores[kind]!();
    await store.connect();
    let f: Fleet | undefined;
    try {
      const limit = defineRateLimit({ name: 'int_api', limit: 2, per: '400ms' });
      const starts: number[] = [];
      const call = defineActivity({
        name: 'int_call',
        rateLimit: limit,
        run: (n: number) => {
          starts.push(Date.now());
          return n;
        },
      });
      const wf = defineWorkflow({
        name: 'int_rate',
        version: 1,
        run: async (ctx, n: number) => ctx.run(call, n),
      });
      f = fleet({ workflows: [wf], concurrency: 4, inProcessWaitMs: 1_000 }, undefined, () => store);
      await f.spawn();
      await f.spawn();
      const handles = await Promise.all([0, 1, 2, 3, 4, 5].map((n) => f!.client.start(wf, n)));
      const results = await Promise.all(handles.map((h) => h.result({ timeoutMs: 10_000 })));
      expect(results.sort()).toEqual([0, 1, 2, 3, 4, 5]);
      expect(starts).toHaveLength(6);
      // Six attempts at two per 400 ms need three windows: the last starts at least 800 ms after
      // the first was granted (the first start trails its grant by a few ms at most).
      const sorted = [...starts].sort((a, b) => a - b);
      expect(sorted[5]! - sorted[0]!).toBeGreaterThanOrEqual(700);
      // And no third attempt started within a window of the first two, give or take that trail.
      for (let i = 0; i + 2 < sorted.length; i++)
        expect(sorted[i + 2]! - sorted[i]!).toBeGreaterThanOrEqual(300);
    } finally {
      await f?.shutdown();
      await store.close();
    }
  });
});
