/**
 * Removes every key under a key prefix: for tearing down a test namespace or a whole deployment
 * (`baton admin drop`, after listing them). Not used by the store itself; nothing of a live
 * deployment should ever call it by accident, so the prefix must be given explicitly and may not
 * be empty.
 */
import { ConfigError } from '@baton/core';
import type { InstallationListing } from '@baton/core/adapter';
import { keyCensus } from '@baton/redis-kit';
import { createConnection } from './connection.js';
import { storeKeyFamily } from './keys.js';
import { resolveRedisStoreOptions, type RedisStoreOptions } from './options.js';

/** `prefix*` as a SCAN MATCH pattern: the prefix's own `*?[]\` taken literally. */
function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
}

/**
 * The keys under the store's key prefix counted by family (runs, leases, checkpoints, schedules,
 * …); `shared` when a key under the prefix is not the store's: another installation whose prefix
 * starts with this one (`baton:` and `baton:staging:`), or another application. Changes nothing.
 */
export async function listRedisKeyPrefix(options: RedisStoreOptions): Promise<InstallationListing> {
  const resolved = resolveRedisStoreOptions(options);
  const connection = createConnection(resolved);
  await connection.open();
  try {
    return await keyCensus(
      connection.redis,
      prefixPattern(resolved.keyPrefix),
      (key) => storeKeyFamily(resolved.keyPrefix, key),
      'the Redis store',
    );
  } finally {
    await connection.close();
  }
}

/** Deletes every key starting with `keyPrefix` (SCAN + UNLINK); returns how many were deleted. */
export async function purgeRedisKeyPrefix(
  options: RedisStoreOptions & { keyPrefix: string },
): Promise<number> {
  if (!options.keyPrefix) throw new ConfigError('purgeRedisKeyPrefix needs a non-empty keyPrefix');
  const connection = createConnection(resolveRedisStoreOptions(options));
  await connection.open();
  let deleted = 0;
  try {
    const pattern = prefixPattern(options.keyPrefix);
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
