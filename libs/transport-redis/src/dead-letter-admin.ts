/**
 * Dead-letter administration on the `<prefix>:dlq` stream: a letter's id is the `n` of its entry
 * id `0-<n>` (never reused, dead-letters.ts), pages walk the stream downward from a cursor with
 * XREVRANGE, and removal deletes the entry, so nothing else needs to remember it.
 */
import { NotFoundError } from '@baton/core';
import {
  checkDeadLetterPurge,
  checkDeadLetterQuery,
  deadLetterCursor,
  positionOfId,
  type DeadLetterPage,
  type DeadLetterPurge,
  type DeadLetterQuery,
  type RedriveResult,
  type StoredDeadLetter,
} from '@baton/core/adapter';
import type { TransportContext } from './context.js';
import { newestLetters, toStoredLetter } from './dead-letters.js';
import { enqueueRunMessage } from './run-queue.js';
import type { StreamEntry } from './streams.js';

const OWNER = 'redis transport';
/** How many letters a purge by time reads per call while it walks the stream. */
const PURGE_SCAN_PAGE = 1_000;

/** One page of letters newest first, below the cursor's id. */
export async function pageDeadLetters(
  context: TransportContext,
  query: DeadLetterQuery | undefined,
): Promise<DeadLetterPage> {
  context.assertOpen('pageDeadLetters');
  const { limit, before } = checkDeadLetterQuery(query, OWNER);
  // One more than the page, to know whether older letters remain.
  const found = await newestLetters(context, before, limit + 1, 'pageDeadLetters');
  const page = found.slice(0, limit);
  const last = page.at(-1);
  return {
    letters: page,
    ...(found.length > limit && last !== undefined ? { cursor: deadLetterCursor(Number(last.id)) } : {}),
  };
}

/** The letter with this id, or undefined. */
export async function getDeadLetter(
  context: TransportContext,
  id: string,
): Promise<StoredDeadLetter | undefined> {
  context.assertOpen('getDeadLetter');
  const n = positionOfId(id);
  if (n === undefined || n < 1) return undefined;
  const entries = (await context.call('getDeadLetter', () =>
    context.redis.xrangeBuffer(context.layout.deadLetters, `0-${n}`, `0-${n}`),
  )) as StreamEntry[];
  const [entry] = entries;
  return entry === undefined ? undefined : toStoredLetter(entry);
}

/** Re-enqueues the letter's original message (acknowledged by Redis), then deletes the letter. */
export async function redriveDeadLetter(context: TransportContext, id: string): Promise<RedriveResult> {
  const letter = await getDeadLetter(context, id);
  if (letter === undefined) {
    throw new NotFoundError(
      `${OWNER}: no dead letter ${JSON.stringify(id)} to redrive; it was never there, or was already redriven or purged (list them with pageDeadLetters)`,
    );
  }
  await enqueueRunMessage(context, letter.data, { headers: letter.headers });
  await deleteLetters(context, [Number(id)], 'redriveDeadLetter');
  return { id, bytes: letter.data.byteLength };
}

/** Deletes the chosen letters; counts those that were there. */
export async function purgeDeadLetters(context: TransportContext, purge: DeadLetterPurge): Promise<number> {
  context.assertOpen('purgeDeadLetters');
  checkDeadLetterPurge(purge, OWNER);
  const key = context.layout.deadLetters;
  if ('all' in purge) {
    // XTRIM keeps the (now empty) stream and its last id, so ids go on from there: never reused.
    return context.call('purgeDeadLetters', () => context.redis.xtrim(key, 'MAXLEN', 0));
  }
  if ('ids' in purge) {
    const ns = purge.ids.map((id) => positionOfId(id)).filter((n): n is number => n !== undefined && n > 0);
    return deleteLetters(context, [...new Set(ns)], 'purgeDeadLetters');
  }
  // `at` is the letter's own field, not the entry's id: walk the stream and compare.
  const doomed: number[] = [];
  for (let start = '-'; ;) {
    const entries = (await context.call('purgeDeadLetters', () =>
      context.redis.xrangeBuffer(key, start, '+', 'COUNT', PURGE_SCAN_PAGE),
    )) as StreamEntry[];
    const letters = entries.map(toStoredLetter);
    for (const letter of letters) if (letter.at < purge.olderThan) doomed.push(Number(letter.id));
    const last = letters.at(-1);
    if (entries.length < PURGE_SCAN_PAGE || last === undefined) break;
    start = `(0-${last.id}`;
  }
  return deleteLetters(context, doomed, 'purgeDeadLetters');
}

async function deleteLetters(context: TransportContext, ns: number[], operation: string): Promise<number> {
  let removed = 0;
  // In chunks: one XDEL of many thousand ids would hold the server for as long.
  for (let i = 0; i < ns.length; i += PURGE_SCAN_PAGE) {
    const chunk = ns.slice(i, i + PURGE_SCAN_PAGE).map((n) => `0-${n}`);
    removed += await context.call(operation, () => context.redis.xdel(context.layout.deadLetters, ...chunk));
  }
  return removed;
}
