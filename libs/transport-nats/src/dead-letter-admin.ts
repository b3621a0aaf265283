/**
 * The dead-letter shelf on JetStream (paging, redrive and purge are core's, dead-letter-queue.ts):
 * a letter's position and id is its sequence in the `<PREFIX>_DLQ` stream (stable: JetStream never
 * renumbers or reuses a sequence), reads walk sequences downward, and removal deletes the message
 * from the stream, so nothing else needs to remember it.
 */
import type { ContextShelf, StoredDeadLetter } from '@baton/core/adapter';
import type { TransportContext } from './context.js';
import { DEAD_LETTER_HEADERS, storeDeadLetter, toDeadLetter } from './dead-letters.js';
import { isApiError } from './setup.js';
import { getStoredMessage, type StoredRecord } from './stream-reader.js';

/**
 * JetStream's API errors for deleting a sequence that holds no message (already removed, or never
 * written): not an error for a purge, which counts what it removed.
 */
const NO_MESSAGE_FOUND = [10037, 10043];
/** The most sequences one window of a read gets at once (concurrently). */
const WINDOW = 1_000;

/** The shelf; the transport puts it on its context with core's shelfOnContext. */
export const natsDeadLetters: ContextShelf<TransportContext> = {
  owner: 'nats transport',
  scanPage: WINDOW,

  store: storeDeadLetter,

  async newest(context, before, count, operation) {
    try {
      const records = await newestRecords(context, before, count);
      return records.map((record) => ({ position: record.seq, letter: toStoredLetter(record) }));
    } catch (err) {
      throw context.toError(operation, err);
    }
  },

  async read(context, seq, operation) {
    // Sequences start at 1.
    if (seq < 1) return undefined;
    try {
      const { deadLetterStream } = context.layout;
      const record = await getStoredMessage(context, deadLetterStream, context.streams.deadLetterReplicas, {
        seq,
      });
      return record === null ? undefined : toStoredLetter(record);
    } catch (err) {
      throw context.toError(operation, err);
    }
  },

  async remove(context, seqs, operation) {
    let removed = 0;
    for (const seq of seqs) {
      if (seq < 1) continue;
      try {
        if (await context.session.jsm.streams.deleteMessage(context.layout.deadLetterStream, seq, false))
          removed += 1;
      } catch (err) {
        if (NO_MESSAGE_FOUND.some((code) => isApiError(err, code))) continue;
        throw context.toError(operation, err);
      }
    }
    return removed;
  },

  async removeAll(context, operation) {
    try {
      return (await context.session.jsm.streams.purge(context.layout.deadLetterStream)).purged;
    } catch (err) {
      throw context.toError(operation, err);
    }
  },

  notOriginal(letter) {
    const truncated = letter.headers[DEAD_LETTER_HEADERS.truncated];
    return truncated === undefined
      ? undefined
      : `its data was cut from ${truncated} bytes to fit max_payload, so it is not the original message`;
  },
};

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
    const size = Math.min(want - found.length, WINDOW);
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
