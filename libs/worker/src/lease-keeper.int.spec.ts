import { randomUUID } from 'node:crypto';
import { afterAll } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { purgeRedisKeyPrefix, redisStore } from '@baton/store-redis';
import { redisTestUrl } from '@baton/testing/servers';
import { describeLeaseRefusals } from './lease-refusals.spec-helper.js';

const keyPrefix = `lease-refusals-${randomUUID()}:`;
const stores: Store[] = [];

afterAll(async () => {
  await Promise.allSettled(stores.map((s) => s.close()));
  await purgeRedisKeyPrefix({ url: redisTestUrl(), keyPrefix });
});

describeLeaseRefusals('redis', async () => {
  const store = redisStore({ url: redisTestUrl(), keyPrefix });
  stores.push(store);
  await store.connect();
  return store;
});
