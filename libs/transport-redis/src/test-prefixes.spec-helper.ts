/**
 * Prefixes for tests on the shared Redis: one family per spec file, so afterAll deletes every key
 * the file's transports wrote (one SCAN of the family), and nothing any other suite wrote.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export interface TestPrefixes {
  /** A fresh prefix in this file's family. */
  next(): string;
  /** Deletes every key of the family. */
  cleanUp(): Promise<void>;
}

export function testPrefixes(url: string): TestPrefixes {
  const family = `tbus${randomBytes(5).toString('hex')}`;
  let count = 0;
  return {
    next: () => `${family}-${++count}`,
    cleanUp: async () => {
      const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${family}-*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.unlink(...keys);
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    },
  };
}
