/**
 * Dead-letter administration on JetStream: a letter's id is its sequence in the `<PREFIX>_DLQ`
 * stream (stable: JetStream never renumbers or reuses a sequence), pages walk sequences downward,
 * and removal deletes the message from the stream, so nothing else needs to remember it.
 */
import { ConfigError, NotFoundError } from '@baton/core';
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
import { DEAD_LETTER_HEADERS, toDeadLetter } from './dead-letters.js';
import { enqueueRunMessage } from './run-queue.js';
import { isApiError } from './setup.js';
import { getStoredMessage, type StoredRecord } from './stream-reader.js';

const OWNER = 'nats transport';
/**
 * JetStream's API errors for deleting a sequence that holds no message (already removed, or never
 * written): not an error for a purge, which counts what it removed.
 */
const NO_MESSAGE_FOUND = [10037, 10043];

/** One page of letters newest first, below the cursor's sequence. */
export async function pageDeadLetters(
  context: TransportContext,
  query: DeadLetterQuery | undefined,
): Promise<DeadLetterPage> {
  context.assertOpen('pageDeadLetters');
  const { limit, before } = checkDeadLetterQuery(query, OWNER);
  try {
    // One more than the page, to know whether older letters remain.
    const found = await newestRecords(context, before, limit + 1);
    const page = found.slice(0, limit);
    const last = page.at(-1);
    return {
      letters: page.map(toStoredLetter),
      ...(found.length > limit && last !== undefined ? { cursor: deadLetterCursor(last.seq) } : {}),
    };
  } catch (err) {
    throw context.toError('pageDeadLetters', err);
  }
}

/** The letter at the id's sequence, or undefined. */
export async function getDeadLetter(
  context: TransportContext,
  id: string,
): Promise<StoredDeadLetter | undefined> {
  context.assertOpen('getDeadLetter');
  const seq = positionOfId(id);
  if (seq === undefined || seq < 1) return undefined;
  try {
    const record = await getStoredMessage(
      context,
      context.layout.deadLetterStream,
      context.streams.deadLetterReplicas,
      {
        seq,
      },
    );
    return record === null ? undefined : toStoredLetter(record);
  } catch (err) {
    throw context.toError('getDeadLetter', err);
  }
}

/** Re-enqueues the letter's original message (acknowledged by the stream), then deletes the letter. */
export async function redriveDeadLetter(context: TransportContext, id: string): Promise<RedriveResult> {
  const letter = await getDeadLetter(context, id);
  if (letter === undefined) {
    throw new NotFoundError(
      `${OWNER}: no dead letter ${JSON.stringify(id)} to redrive; it was never there, or was already redriven or purged (list them with pageDeadLetters)`,
    );
  }
  const truncated = letter.headers[DEAD_LETTER_HEADERS.truncated];
  if (truncated !== undefined) {
    throw new ConfigError(
      `${OWNER}: dead letter ${id} cannot be redriven: its data was cut from ${truncated} bytes to fit max_payload, so it is not the original message; purge it once handled`,
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
  const stream = context.layout.deadLetterStream;
  if ('all' in purge) {
    try {
      return (await context.session.jsm.streams.purge(stream)).purged;
    } catch (err) {
      throw context.toError('purgeDeadLetters', err);
    }
  }
  let seqs: number[];
  if ('ids' in purge) {
    seqs = purge.ids
      .map((id) => positionOfId(id))
      .filter((seq): seq is number => seq !== undefined && seq > 0);
  } else {
    // `at` is the letter's own field, not the stream's timestamp: read them all to compare.
    const all = await newestRecords(context, undefined, Number.MAX_SAFE_INTEGER).catch((err: unknown) => {
      throw context.toError('purgeDeadLetters', err);
    });
    seqs = all
      .map(toStoredLetter)
      .filter((l) => l.at < purge.olderThan)
      .map((l) => Number(l.id));
  }
  return deleteLetters(context, [...new Set(seqs)], 'purgeDeadLetters');
}

async function deleteLetters(context: TransportContext, seqs: number[], operation: string): Promise<number> {
  let removed = 0;
  for (const seq of seqs) {
    try {
      if (await context.session.jsm.streams.deleteMessage(context.layout.deadLetterStream, seq, false))
        removed += 1;
    } catch (err) {
      if (NO_MESSAGE_FOUND.some((code) => isApiError(err, code))) continue;
      throw context.toError(operation, err);
    }
  }
  return removed;
}

/**
 * Up to `want` stored letters below sequence `before` (all when undefined), newest first. Windows
 * of sequences are read concurrently; deleted sequences leave gaps, so it walks on until it has
 * enough or reaches the stream's first sequence.
 */
async function newestRecords(
  context: TransportContext,
  before: number | undefined,
  want: number,
): Promise<StoredRecord[]> {
  const stream = context.layout.deadLetterStream;
  const { state } = await context.session.jsm.streams.info(stream);
  if (state.messages === 0) return [];
  const found: StoredRecord[] = [];
  const top = before === undefined ? state.last_seq : Math.min(state.last_seq, before - 1);
  for (let high = top; high >= state.first_seq && found.length < want;) {
    const size = Math.min(want - found.length, 1_000);
    const low = Math.max(state.first_seq, high - size + 1);
    const window = await Promise.all(
      range(low, high).map((seq) =>
        getStoredMessage(context, stream, context.streams.deadLetterReplicas, { seq }),
      ),
    );
    const present = window.filter((record): record is StoredRecord => record !== null);
    found.push(...present.reverse());
    high = low - 1;
  }
  return found.slice(0, want);
}

function toStoredLetter(record: StoredRecord): StoredDeadLetter {
  return { ...toDeadLetter(record), id: String(record.seq) };
}

function range(low: number, high: number): number[] {
  return Array.from({ length: Math.max(0, high - low + 1) }, (_, i) => low + i);
}
