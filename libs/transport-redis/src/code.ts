/**
 * The package's code its registration needs, in a module of its own: registration.ts imports it
 * lazily (`load()`), and index.ts provides it to whoever imported the package. Neither of those
 * modules is imported from here, so the lazy import closes no cycle.
 */
import { redisTransport } from './redis-transport.js';
import { deleteRedisTransportKeys, listRedisTransportKeys } from './admin.js';

/** What the registration needs of the package's code. */
export interface RedisBusCode {
  redisTransport: typeof redisTransport;
  deleteRedisTransportKeys: typeof deleteRedisTransportKeys;
  listRedisTransportKeys: typeof listRedisTransportKeys;
}

export const redisBusAdapterCode: RedisBusCode = {
  redisTransport,
  deleteRedisTransportKeys,
  listRedisTransportKeys,
};
