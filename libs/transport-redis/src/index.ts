/**
 * @baton/transport-redis: the Baton {@link Transport} on Redis 7 alone. Run messages are jobs of a
 * BullMQ queue (BullMQ's delivery, ordering and delayed jobs; Baton's leases stay the authority
 * over who runs a run); each run's journal is a Redis Stream appended by a script that checks the
 * expected position in the same call; group logs and dead letters are streams too.
 *
 * @example
 * ```ts
 * import { redisTransport } from '@baton/transport-redis';
 *
 * const transport = redisTransport({
 *   url: process.env.BATON_TRANSPORT_URL, // e.g. redis://:secret@redis:6379/0
 *   prefix: 'baton-bus',                  // keys baton-bus:runs:*, baton-bus:journal:<runId>, baton-bus:dlq
 * });
 * await transport.connect(); // fails within connectTimeoutMs, naming the server and the cause
 * const worker = new Worker({ transport, store, workflows: [loanApproval] });
 * ```
 */
import { redisBusAdapterCode } from './code.js';
import { redisBusCode } from './registration.js';

export type { RedisServer, RedisTransportOptions, ResolvedRedisTransportOptions } from './options.js';
export {
  DEFAULT_REDIS_TRANSPORT_PREFIX,
  DEFAULT_REDIS_TRANSPORT_URL,
  REDIS_TRANSPORT_PREFIX,
  resolveRedisTransportOptions,
} from './options.js';
export type { RedisLayout } from './layout.js';
export { layoutFor } from './layout.js';
export { redisTransport } from './redis-transport.js';
export { MIN_REDIS_MAJOR } from './connection.js';
export { FOREIGN_JOB_HEADER } from './run-queue.js';
export { deleteRedisTransportKeys } from './admin.js';
export { redisBusRegistration, type RedisBusSettings } from './registration.js';

// The registration holds none of the code above; importing the package provides it (AdapterCode).
redisBusCode.provide(redisBusAdapterCode);
