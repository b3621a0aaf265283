/**
 * The dead-letter shelf on the `<prefix>:dlq` stream (paging, redrive and purge are core's,
 * dead-letter-queue.ts): a letter's position and id is the `n` of its entry id `0-<n>` (never
 * reused, dead-letters.ts), reads walk the stream downward with XREVRANGE, and removal deletes the
 * entry, so nothing else needs to remember it.
 */
import type { ContextShelf, PositionedDeadLetter } from '@baton/core/adapter';
import type { TransportContext } from './context.js';
import { storeDeadLetter, toStoredLetter } from './dead-letters.js';
import type { StreamEntry } from './streams.js';

/** How many letters one read of a walk over every letter, and one XDEL, takes at most. */
const CHUNK = 1_000;

/** The shelf; the transport puts it on its context with core's shelfOnContext. */
export const redisDeadLetters: ContextShelf<TransportContext> = {
  owner: 'redis transport',
  scanPage: CHUNK,

  store: storeDeadLetter,

  async newest(context, before, count, operation) {
    const top = before === undefined ? '+' : `(0-${before}`;
    const entries = (await context.call(operation, () =>
      context.redis.xrevrangeBuffer(context.layout.deadLetters, top, '-', 'COUNT', count),
    )) as StreamEntry[];
    return entries.map(positioned);
  },

  async read(context, n, operation) {
    // Entry ids start at 0-1.
    if (n < 1) return undefined;
    const entries = (await context.call(operation, () =>
      context.redis.xrangeBuffer(context.layout.deadLetters, `0-${n}`, `0-${n}`),
    )) as StreamEntry[];
    const [entry] = entries;
    return entry === undefined ? undefined : toStoredLetter(entry);
  },

  async remove(context, ns, operation) {
    const ids = ns.filter((n) => n > 0).map((n) => `0-${n}`);
    let removed = 0;
    // In chunks: one XDEL of many thousand ids would hold the server for as long.
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      removed += await context.call(operation, () =>
        context.redis.xdel(context.layout.deadLetters, ...chunk),
      );
    }
    return removed;
  },

  removeAll(context, operation) {
    // XTRIM keeps the (now empty) stream and its last id, so ids go on from there: never reused.
    return context.call(operation, () => context.redis.xtrim(context.layout.deadLetters, 'MAXLEN', 0));
  },
};

function positioned(entry: StreamEntry): PositionedDeadLetter {
  const letter = toStoredLetter(entry);
  return { position: Number(letter.id), letter };
}
