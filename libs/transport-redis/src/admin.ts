/**
 * Operations on a prefix as a whole, outside a transport's lifecycle: for test clean-up and for
 * decommissioning an installation.
 */
import { openCommandConnection } from './connection.js';
import { toRedisTransportError } from './errors.js';
import { layoutFor } from './layout.js';
import { resolveRedisTransportOptions, type RedisTransportOptions } from './options.js';

/** How many keys one SCAN step asks for. */
const SCAN_COUNT = 1_000;
/** How long closing waits for QUIT before it drops the socket. */
const CLOSE_TIMEOUT_MS = 1_000;

/**
 * Deletes every key of the prefix (`<prefix>:*`): the BullMQ queue with every run message, every
 * journal and group log, the dead letters. Keys already gone are fine. Irreversible.
 *
 * @example
 * await deleteRedisTransportKeys({ url: 'redis://127.0.0.1:6379', prefix: 'c1a2b3c4d5' });
 */
export async function deleteRedisTransportKeys(options: RedisTransportOptions): Promise<number> {
  const resolved = resolveRedisTransportOptions(options);
  const pattern = layoutFor(resolved.prefix).everything;
  const connection = await openCommandConnection(resolved);
  const { redis } = connection;
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
      cursor = next;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== '0');
    return deleted;
  } catch (err) {
    throw toRedisTransportError(err, { url: resolved.displayUrl, operation: `delete keys ${pattern}` });
  } finally {
    await connection.close(CLOSE_TIMEOUT_MS);
  }
}
