/**
 * The package's code its registration needs, in a module of its own: registration.ts imports it
 * lazily (`load()`), and index.ts provides it to whoever imported the package. Neither of those
 * modules is imported from here, so the lazy import closes no cycle.
 */
import { redisStore } from './redis-store.js';
import { listRedisKeyPrefix, purgeRedisKeyPrefix } from './purge.js';

/** What the registration needs of the package's code. */
export interface RedisStoreCode {
  redisStore: typeof redisStore;
  purgeRedisKeyPrefix: typeof purgeRedisKeyPrefix;
  listRedisKeyPrefix: typeof listRedisKeyPrefix;
}

export const redisStoreAdapterCode: RedisStoreCode = {
  redisStore,
  purgeRedisKeyPrefix,
  listRedisKeyPrefix,
};
