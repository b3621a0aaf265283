/**
 * keyCensus: the keys under a pattern counted by family across every SCAN page, and `shared`
 * naming the keys of no family (with how many there are), never when every key has one.
 */
import { describe, expect, it } from 'vitest';
import { keyCensus, type ScanningRedis } from './key-census.js';

/** A Redis whose SCAN hands out `keys` two at a time, and records the patterns it was asked for. */
function pagedRedis(keys: string[]): ScanningRedis & { patterns: string[] } {
  const patterns: string[] = [];
  return {
    patterns,
    scan: async (cursor, _match, pattern) => {
      patterns.push(pattern);
      const at = Number(cursor);
      const next = at + 2 >= keys.length ? '0' : String(at + 2);
      return [next, keys.slice(at, at + 2)];
    },
  };
}

const familyOf = (key: string): string | undefined =>
  key.startsWith('p:run:') ? 'p:run:*' : key === 'p:held' ? key : undefined;

describe('keyCensus', () => {
  it('counts the keys of every page by family, in name order', async () => {
    const redis = pagedRedis(['p:run:1', 'p:held', 'p:run:2', 'p:run:3', 'p:run:4']);
    expect(await keyCensus(redis, 'p:*', familyOf, 'the store')).toEqual({
      items: [
        { kind: 'keys', name: 'p:held', detail: '1 key(s)' },
        { kind: 'keys', name: 'p:run:*', detail: '4 key(s)' },
      ],
    });
    expect(redis.patterns).toEqual(['p:*', 'p:*', 'p:*']);
  });

  it('names the keys of no family, a few of them, and how many there are', async () => {
    const redis = pagedRedis(['p:run:1', 'p:eu:run:1', 'p:eu:held', 'p:eu:timers', 'p:eu:run:2']);
    const listing = await keyCensus(redis, 'p:*', familyOf, 'the store');
    expect(listing.items).toEqual([{ kind: 'keys', name: 'p:run:*', detail: '1 key(s)' }]);
    expect(listing.shared).toBe(
      "4 key(s) matching p:* are not the store's (e.g. 'p:eu:run:1', 'p:eu:held', 'p:eu:timers'): another " +
        'installation whose prefix starts with this one, or another application, keeps data there, and removing ' +
        'the prefix would remove it too',
    );
  });

  it('lists nothing for a prefix without keys', async () => {
    expect(await keyCensus(pagedRedis([]), 'p:*', familyOf, 'the store')).toEqual({ items: [] });
  });
});
