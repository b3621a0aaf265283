/**
 * The Redis store as the worker process knows it (`@baton/core/adapter`'s AdapterRegistration):
 * `redis://`, `rediss://`, `redis+sentinel://` and `rediss+sentinel://` URLs, the BATON_REDIS_*
 * variables, and the key prefix shown in the `worker ready` line. This module (the package's
 * `/registration` export) imports none of the store's code (ioredis): `load()` does (AdapterCode).
 */
import { AdapterCode, textSetting, wholeNumberSetting, type AdapterRegistration } from '@baton/core/adapter';
import { resolveRedisStoreOptions } from './options.js';
import type { RedisStoreCode } from './code.js';

export type { RedisStoreCode } from './code.js';

/** The package's code, loaded when a process picks this store. */
export const redisStoreCode = new AdapterCode<RedisStoreCode>(
  'the Redis store',
  async () => (await import('./code.js')).redisStoreAdapterCode,
);

/** The settings the BATON_REDIS_* variables give. */
export interface RedisSettings {
  keyPrefix?: string;
  waitReplicas?: number;
  waitTimeoutMs?: number;
  sentinelPassword?: string;
}

/** What listing and removing the prefix's keys need: the server, the resolved prefix, the sentinels' password. */
function adminOptions(url: string, { keyPrefix, sentinelPassword }: RedisSettings) {
  return {
    url,
    keyPrefix: resolveRedisStoreOptions({ url, ...(keyPrefix !== undefined && { keyPrefix }) }).keyPrefix,
    ...(sentinelPassword !== undefined && { sentinelPassword }),
  };
}

export const redisRegistration: AdapterRegistration<'redis', 'store', RedisSettings> = {
  name: 'redis',
  kind: 'store',
  schemes: ['redis', 'rediss', 'redis+sentinel', 'rediss+sentinel'],
  variables: {
    keyPrefix: {
      ...textSetting('BATON_REDIS_KEY_PREFIX', 'prefix of every Redis key', 'keyPrefix'),
      default: '`baton:`',
    },
    waitReplicas: {
      ...wholeNumberSetting(
        'BATON_REDIS_WAIT_REPLICAS',
        'replicas that must confirm every write that moves a run (lease claims, checkpoints, finishes, suspends, signals, payloads) before it counts (`WAIT`); `0` turns the guard off ([docs/production.md](docs/production.md#redis))',
        0,
        'waitReplicas',
      ),
      default: '`1` with `redis+sentinel://`, else `0`',
    },
    waitTimeoutMs: {
      ...wholeNumberSetting(
        'BATON_REDIS_WAIT_TIMEOUT_MS',
        'how long such a write waits for its replicas; then it fails (retryable) and nothing acts on it',
        1,
        'waitTimeoutMs',
      ),
      default: '`1000`',
    },
    sentinelPassword: {
      ...textSetting(
        'BATON_REDIS_SENTINEL_PASSWORD',
        "the sentinels' own password with a `redis+sentinel://` URL (the URL's password is the data nodes')",
        'sentinelPassword',
      ),
      secret: true,
    },
  },
  urlOption: 'url',
  load: () => redisStoreCode.load(),
  create: (url, { keyPrefix, waitReplicas, waitTimeoutMs, sentinelPassword }) =>
    redisStoreCode.get().redisStore({
      url,
      ...(keyPrefix !== undefined && { keyPrefix }),
      ...(waitReplicas !== undefined && { waitReplicas }),
      ...(waitTimeoutMs !== undefined && { waitTimeoutMs }),
      ...(sentinelPassword !== undefined && { sentinelPassword }),
    }),
  // The key prefix as the store resolves it: unset is the default installation's (`baton:`).
  installation: {
    list: async (url, settings) =>
      (await redisStoreCode.load()).listRedisKeyPrefix(adminOptions(url, settings)),
    drop: async (url, settings) => {
      await (await redisStoreCode.load()).purgeRedisKeyPrefix(adminOptions(url, settings));
    },
  },
  isolation: { settings: (id) => ({ keyPrefix: `${id}:` }) },
  describeNamespace: (url, settings) => ({ redisKeyPrefix: adminOptions(url, settings).keyPrefix }),
};
