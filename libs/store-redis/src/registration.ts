/**
 * The Redis store as the worker process knows it (`@baton/core/adapter`'s AdapterRegistration):
 * `redis://` and `rediss://` URLs, BATON_REDIS_KEY_PREFIX, and the key prefix shown in the
 * `worker ready` line.
 */
import { textSetting, type AdapterRegistration } from '@baton/core/adapter';
import { resolveRedisStoreOptions } from './options.js';
import { purgeRedisKeyPrefix } from './purge.js';
import { redisStore } from './redis-store.js';

/** The settings the BATON_REDIS_* variables give. */
export interface RedisSettings {
  keyPrefix?: string;
}

export const redisRegistration: AdapterRegistration<'redis', 'store', RedisSettings> = {
  name: 'redis',
  kind: 'store',
  schemes: ['redis', 'rediss'],
  variables: {
    keyPrefix: textSetting(
      'BATON_REDIS_KEY_PREFIX',
      'prefix of every Redis key; default baton:',
      /\bkeyPrefix\b/,
    ),
  },
  messages: { prefix: /^redisStore: /, url: /\burl\b/ },
  create: (url, { keyPrefix }) => redisStore({ url, ...(keyPrefix !== undefined && { keyPrefix }) }),
  isolation: {
    settings: (id) => ({ keyPrefix: `${id}:` }),
    // purgeRedisKeyPrefix refuses an empty prefix itself.
    remove: async (url, { keyPrefix }) => {
      await purgeRedisKeyPrefix({ url, keyPrefix: keyPrefix ?? '' });
    },
  },
  describeNamespace: (url, { keyPrefix }) => ({
    redisKeyPrefix: resolveRedisStoreOptions({ url, ...(keyPrefix !== undefined && { keyPrefix }) })
      .keyPrefix,
  }),
};
