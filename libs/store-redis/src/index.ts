/**
 * @baton/store-redis: the Baton {@link Store} on Redis (ioredis, Lua scripts, the server's TIME as
 * the clock). Leases with fencing epochs, fenced checkpoints with history, the run index with
 * idempotency keys, timers, the signal inbox, and worker presence bound to named connections.
 * A single Redis primary; Redis Cluster is not supported (keys carry no hash tags).
 *
 * @example
 * ```ts
 * import { redisStore } from '@baton/store-redis';
 *
 * const store = redisStore({ url: process.env.BATON_STORE_URL, keyPrefix: 'baton:' });
 * await store.connect(); // fails within connectTimeoutMs, naming the server and the cause
 * const worker = new Worker({ transport, store, workflows: [loanApproval] });
 * ```
 */
import { redisStoreAdapterCode } from './code.js';
import { redisStoreCode } from './registration.js';

export type { RedisStoreOptions, ResolvedRedisStoreOptions } from './options.js';
export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_KEY_PREFIX,
  DEFAULT_PRESENCE_GRACE_MS,
  DEFAULT_REDIS_URL,
  DEFAULT_WAIT_TIMEOUT_MS,
  maskUrl,
  resolveRedisStoreOptions,
} from './options.js';
export { redisStore, type RunReindexing } from './redis-store.js';
export { purgeRedisKeyPrefix } from './purge.js';
export { SENTINEL_SCHEMES, type SentinelTarget } from './sentinel-url.js';
export { redisRegistration, type RedisSettings } from './registration.js';

// The registration holds none of the code above; importing the package provides it (AdapterCode).
redisStoreCode.provide(redisStoreAdapterCode);
