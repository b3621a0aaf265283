/**
 * `@baton/redis-kit`: what the two Redis adapters (`@baton/store-redis`, `@baton/transport-redis`)
 * share and no other package needs: Sentinel URLs (`redis+sentinel://`), the connection settings
 * that make ioredis reconnect, fail over and open with a deadline the same way in both, the
 * Lua script runner, and the census of a key prefix `baton admin drop` shows. Internal to Baton: published only because the adapters depend on it, with no
 * stability promise of its own.
 */
export type { ParsedSentinelUrl, SentinelTarget } from './sentinel-url.js';
export { isSentinelUrl, parseSentinelUrl, SENTINEL_SCHEMES } from './sentinel-url.js';
export type { RedisConnectionEvents, RevivableRedis, SentinelSettings } from './connection.js';
export {
  redisReconnectDelay,
  redisRetryDelay,
  reviveEndedRedis,
  sentinelSettings,
  watchRedisConnection,
} from './connection.js';
export type { LuaCommandHost, LuaScriptRunner } from './scripts.js';
export { defineLuaScripts } from './scripts.js';
export { keyCensus } from './key-census.js';
