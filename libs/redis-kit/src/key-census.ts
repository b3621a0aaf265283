/**
 * What an installation keeps under a key prefix, for `baton admin drop` to show before it removes
 * the prefix: the keys counted by family, and the keys that belong to no family of the adapter's
 * (another installation whose prefix starts with this one, another application), which would go
 * with the prefix and make the drop refuse.
 */
import type { InstallationListing } from '@baton/core/adapter';
/** One thing the listing names. */
type InstallationItem = InstallationListing['items'][number];

/** The part of an ioredis client a census uses. */
export interface ScanningRedis {
  scan(
    cursor: string,
    match: 'MATCH',
    pattern: string,
    count: 'COUNT',
    n: number,
  ): Promise<[string, string[]]>;
}

/** How many keys one SCAN step asks for. */
const SCAN_COUNT = 1_000;
/** Keys of no family named in the refusal. */
const EXAMPLES = 3;

/**
 * Counts the keys matching `pattern` (a SCAN MATCH pattern, already escaped) by family:
 * `familyOf(key)` names the family of one of the adapter's keys (`baton:run:*`, or the key itself
 * for a key of its own), or undefined for a key that is not the adapter's. `owner` names the
 * adapter in the refusal (`the Redis store`). Changes nothing.
 */
export async function keyCensus(
  redis: ScanningRedis,
  pattern: string,
  familyOf: (key: string) => string | undefined,
  owner: string,
): Promise<InstallationListing> {
  const families = new Map<string, number>();
  const foreign: string[] = [];
  let foreignCount = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
    cursor = next;
    for (const key of keys) {
      const family = familyOf(key);
      if (family !== undefined) families.set(family, (families.get(family) ?? 0) + 1);
      else if ((foreignCount += 1) <= EXAMPLES) foreign.push(key);
    }
  } while (cursor !== '0');
  const items: InstallationItem[] = [...families]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, count]) => ({ kind: 'keys', name, detail: `${count} key(s)` }));
  if (foreignCount === 0) return { items };
  const examples = foreign.map((k) => `'${k}'`).join(', ');
  return {
    items,
    shared:
      `${foreignCount} key(s) matching ${pattern} are not ${owner}'s (e.g. ${examples}): another installation ` +
      'whose prefix starts with this one, or another application, keeps data there, and removing the prefix ' +
      'would remove it too',
  };
}
