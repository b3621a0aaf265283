import { afterAll } from 'vitest';
import { describeStoreConformance } from '@baton/testing';
import { redisTestUrl } from '@baton/testing/servers';
import { redisStore } from './index.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const prefixes = testPrefixes(redisTestUrl());
afterAll(() => prefixes.cleanUp());

describeStoreConformance('redis', () => redisStore({ url: redisTestUrl(), keyPrefix: prefixes.next() }), {
  pair: () => {
    const keyPrefix = prefixes.next();
    return [redisStore({ url: redisTestUrl(), keyPrefix }), redisStore({ url: redisTestUrl(), keyPrefix })];
  },
});
