/**
 * Each run's journal on a Redis Stream of its own, `<prefix>:journal:<runId>`, whose entry ids are
 * `0-<position>`: positions 1, 2, 3… with no gaps, so a read by position is one XRANGE.
 *
 * Invariants:
 * 1. An append that expects a last position lands only if that is the stream's last position, in
 *    the same script call that writes it (lua/journal-append.lua): two writers expecting the same
 *    position never both land, and a fenced owner (the new owner's marker moved the position on)
 *    is refused before it writes anything.
 * 2. An append whose reply was lost (the connection dropped) is retried a bounded number of times
 *    with the same token; the script recognises a token that already landed and answers its
 *    position, so a retry never writes a record twice nor reports its own landing as a conflict.
 */
import { randomBytes } from 'node:crypto';
import { BatonError } from '@baton/core';
import {
  bufferView,
  ownedBytes,
  type ContextJournal,
  type JournalAppend,
  type JournalRecord,
  JournalConflictError,
} from '@baton/core/adapter';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TransportContext } from './context.js';
import { redisCommandFailed } from './errors.js';
import { fieldsOf, positionOfEntryId, type StreamEntry } from './streams.js';

/** Records one XRANGE of a read returns at most. */
const READ_PAGE = 1_000;
/** Attempts of one append while Redis is unavailable (invariant 2); each bounded by requestTimeoutMs. */
const APPEND_ATTEMPTS = 3;
/** Pause between those attempts: long enough for a dropped connection to come back. */
const APPEND_RETRY_DELAY_MS = 250;

/**
 * The transport's journal, written against its context: the transport hands each call the context
 * with core's journalOnContext, which checks it first (run ids, expected positions, empty ranges),
 * inside its lifecycle guard.
 */
export const redisJournal: ContextJournal<TransportContext> = {
  supportsOptimisticAppend: true,
  purgeMode: 'deletes',
  append: appendJournalRecord,
  read: readJournal,
  purge: purgeJournal,
};

/**
 * Appends one record (invariants 1 and 2); resolves with its position. The run id and the expected
 * position were checked by `journalOnContext`.
 */
export async function appendJournalRecord(context: TransportContext, append: JournalAppend): Promise<number> {
  const expected = append.expectedLastPosition;
  const token = randomBytes(12).toString('base64url');
  const data = Buffer.from(bufferView(append.data));
  for (let attempt = 1; ; attempt++) {
    try {
      return await context.writeReplicated('append', async () => {
        const reply = await context.scripts(
          'journal-append',
          [context.layout.journal(append.runId)],
          [data, expected ?? '', token],
        );
        return positionOrConflict(append.runId, expected, reply);
      });
    } catch (err) {
      const retryable = err instanceof BatonError && err.retryable && !(err instanceof JournalConflictError);
      if (!retryable || attempt >= APPEND_ATTEMPTS || context.closing.aborted) throw err;
      await sleep(APPEND_RETRY_DELAY_MS);
    }
  }
}

function positionOrConflict(runId: string, expected: number | undefined, reply: unknown): number {
  if (Array.isArray(reply) && reply.length === 2 && typeof reply[1] === 'number') {
    if (reply[0] === 'ok') return reply[1];
    if (reply[0] === 'conflict') throw new JournalConflictError(runId, expected ?? 0, reply[1]);
  }
  throw redisCommandFailed(
    `redis transport: the journal append script answered ${JSON.stringify(reply)} for run ${runId}; expected ['ok', position] or ['conflict', last]`,
  );
}

/** The run's records with afterPosition < position <= uptoPosition, in order. */
export async function readJournal(
  context: TransportContext,
  runId: string,
  afterPosition: number,
  uptoPosition?: number,
): Promise<JournalRecord[]> {
  const key = context.layout.journal(runId);
  const end = uptoPosition === undefined ? '+' : `0-${Math.floor(uptoPosition)}`;
  const records: JournalRecord[] = [];
  // A page at a time, so a long tail never becomes one reply of unbounded size.
  for (let after = Math.max(0, Math.floor(afterPosition)); ;) {
    const entries = (await context.call('read', () =>
      context.redis.xrangeBuffer(key, `(0-${after}`, end, 'COUNT', READ_PAGE),
    )) as StreamEntry[];
    for (const [id, fields] of entries) {
      records.push({
        position: positionOfEntryId(id),
        data: ownedBytes(fieldsOf(fields).get('d') ?? Buffer.alloc(0)),
      });
    }
    const last = records.at(-1);
    if (entries.length < READ_PAGE || last === undefined) return records;
    after = last.position;
  }
}

/** Deletes the run's stream: its records are gone when this resolves. */
export async function purgeJournal(context: TransportContext, runId: string): Promise<void> {
  await context.call('purgeJournal', () => context.redis.unlink(context.layout.journal(runId)));
}
