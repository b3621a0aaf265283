import { afterAll } from 'vitest';
import { describeStoreConformance } from '@baton/testing';
import { redisTestUrl } from '@baton/testing/servers';
import { redisStore } from './index.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';
import { damageRedisCheckpoint } from './damage.spec-helper.js';
import type { Store } from '@baton/core/adapter';

const prefixes = testPrefixes(redisTestUrl());
afterAll(() => prefixes.cleanUp());

/** The key prefix of each store the suite made, so its damage hook can reach behind it. */
const prefixOf = new WeakMap<Store, string>();
const freshStore = (): Store => {
  const keyPrefix = prefixes.next();
  const store = redisStore({ url: redisTestUrl(), keyPrefix });
  prefixOf.set(store, keyPrefix);
  return store;
};

describeStoreConformance('redis', freshStore, {
  damage: (store, runId, seq, damage) =>
    damageRedisCheckpoint(redisTestUrl(), prefixOf.get(store)!, runId, seq, damage),
  pair: () => {
    const keyPrefix = prefixes.next();
    return [redisStore({ url: redisTestUrl(), keyPrefix }), redisStore({ url: redisTestUrl(), keyPrefix })];
  },
});
