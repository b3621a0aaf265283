/**
 * Operations on a prefix as a whole, outside a transport's lifecycle: for test clean-up and for
 * decommissioning an installation (`baton admin drop`: list, then delete).
 */
import type { InstallationListing } from '@baton/core/adapter';
import { keyCensus } from '@baton/redis-kit';
import { openCommandConnection } from './connection.js';
import { toRedisTransportError } from './errors.js';
import { layoutFor, type RedisLayout } from './layout.js';
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

/**
 * The family of one of the transport's keys (`<prefix>:runs:*`, `<prefix>:journal:*`,
 * `<prefix>:dlq`), or undefined for a key under `<prefix>:` that is not the transport's (a store
 * whose key prefix starts with `<prefix>:`).
 */
export function transportKeyFamily(layout: RedisLayout, key: string): string | undefined {
  const queues = Object.values(layout.runLanes).map((lane) => lane.queueName);
  const families = [...queues, 'journal', 'group'].map((segment) => `${layout.prefix}:${segment}:`);
  const family = families.find((f) => key.startsWith(f));
  if (family !== undefined) return `${family}*`;
  return key === layout.deadLetters ? key : undefined;
}

/**
 * The prefix's keys counted by family (the BullMQ queue of each run lane, the journals, the group
 * logs, the dead letters); `shared` when a key under `<prefix>:` is none of them. Changes nothing.
 */
export async function listRedisTransportKeys(options: RedisTransportOptions): Promise<InstallationListing> {
  const resolved = resolveRedisTransportOptions(options);
  const layout = layoutFor(resolved.prefix);
  const connection = await openCommandConnection(resolved);
  try {
    return await keyCensus(
      connection.redis,
      layout.everything,
      (key) => transportKeyFamily(layout, key),
      'the Redis transport',
    );
  } catch (err) {
    throw toRedisTransportError(err, {
      url: resolved.displayUrl,
      operation: `list keys ${layout.everything}`,
    });
  } finally {
    await connection.close(CLOSE_TIMEOUT_MS);
  }
}
