/**
 * Removes every key under a key prefix: for tearing down a test namespace or a whole deployment.
 * Not used by the store itself; nothing of a live deployment should ever call it by accident, so
 * the prefix must be given explicitly and may not be empty.
 */
import { ConfigError } from '@baton/core';
import { createConnection } from './connection.js';
import { resolveRedisStoreOptions, type RedisStoreOptions } from './options.js';

/** Deletes every key starting with `keyPrefix` (SCAN + UNLINK); returns how many were deleted. */
export async function purgeRedisKeyPrefix(
  options: RedisStoreOptions & { keyPrefix: string },
): Promise<number> {
  if (!options.keyPrefix) throw new ConfigError('purgeRedisKeyPrefix needs a non-empty keyPrefix');
  const connection = createConnection(resolveRedisStoreOptions(options));
  await connection.open();
  let deleted = 0;
  try {
    const pattern = `${options.keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    let cursor = '0';
    do {
      const [next, keys] = await connection.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await connection.redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    await connection.close();
  }
  return deleted;
}
