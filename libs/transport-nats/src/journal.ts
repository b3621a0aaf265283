/**
 * The journal on JetStream: one limits stream, one subject per run (`<prefix>.journal.<runId>`).
 * A record's position is its stream sequence: strictly increasing per run, not contiguous.
 *
 * Invariants:
 * 1. An append with `expectedLastPosition` lands only if the run's last record is at that
 *    position (0: the run has none). The server checks it atomically through the
 *    `Nats-Expected-Last-Subject-Sequence` header, so of two writers with the same expectation
 *    exactly one wins; the loser gets JournalConflictError with the position it found.
 * 2. An append resolves with the record's sequence only after the server stored it (PubAck).
 * 3. A record that cannot fit (data + headers above the server's max_payload) is refused before
 *    anything is sent, with PayloadTooLargeError: it would never fit, so nobody should retry.
 * 4. An append whose acknowledgement is lost (a leader change, a timeout) is retried within a
 *    bounded budget and lands at most once: a retry finds the first attempt by its message id
 *    (append-retry.ts), and a conflict with its own earlier attempt is no conflict.
 */

import {
  type ContextJournal,
  type JournalAppend,
  type JournalRecord,
  JournalConflictError,
} from '@baton/core/adapter';
import type { TransportContext } from './context.js';
import { readJournalRange } from './journal-reader.js';
import { assertFits, toNatsHeaders } from './messages.js';
import { isApiError } from './setup.js';
import { getStoredMessage } from './stream-reader.js';
import { MSG_ID, publishWithRetry, WRONG_LAST_SEQUENCE } from './append-retry.js';

const EXPECTED_LAST_SUBJECT_SEQUENCE = 'Nats-Expected-Last-Subject-Sequence';

/**
 * The transport's journal, written against its context: the transport hands each call the context
 * with core's journalOnContext, which checks it first (run ids, expected positions, empty ranges),
 * inside its lifecycle guard.
 */
export const natsJournal: ContextJournal<TransportContext> = {
  supportsOptimisticAppend: true,
  purgeMode: 'deletes',
  append: appendJournalRecord,
  read: readJournal,
  purge: purgeJournal,
};

/**
 * Appends one record; see the invariants above. The run id (a subject token) and the expected
 * position were checked by `journalOnContext`.
 */
export async function appendJournalRecord(context: TransportContext, append: JournalAppend): Promise<number> {
  const { runId, data, expectedLastPosition: expected } = append;
  const { session, layout } = context;
  const h = toNatsHeaders(undefined, {
    [MSG_ID]: context.messageIds.next(),
    ...(expected !== undefined && { [EXPECTED_LAST_SUBJECT_SEQUENCE]: String(expected) }),
  });
  assertFits(session.nc, `journal record of run ${runId}`, data, h);
  try {
    return await publishWithRetry(context, layout.journalSubject(runId), data, h, context.appendStats);
  } catch (err) {
    if (expected !== undefined && isApiError(err, WRONG_LAST_SEQUENCE)) {
      const actual = foundSequence(err) ?? (await lastPosition(context, runId));
      throw new JournalConflictError(runId, expected, actual);
    }
    throw context.toError('append', err);
  }
}

/** Reads records with `afterPosition < position <= uptoPosition`, in order. */
export async function readJournal(
  context: TransportContext,
  runId: string,
  afterPosition: number,
  uptoPosition?: number,
): Promise<JournalRecord[]> {
  try {
    return await readJournalRange(context, context.layout.journalSubject(runId), afterPosition, uptoPosition);
  } catch (err) {
    throw context.toError('read', err);
  }
}

/**
 * Purges the run's journal subject (the stream purge API with `filter` = the subject): every
 * record of the run is gone when it resolves; other runs' records stay. A run with no record is
 * fine. The caller purges only finished runs whose store data is deleted.
 */
export async function purgeJournal(context: TransportContext, runId: string): Promise<void> {
  try {
    await context.session.jsm.streams.purge(context.layout.journalStream, {
      filter: context.layout.journalSubject(runId),
    });
  } catch (err) {
    throw context.toError('purgeJournal', err);
  }
}

/** The sequence the server found, from "wrong last sequence: 42". */
function foundSequence(err: unknown): number | undefined {
  const match = /wrong last sequence:\s*(\d+)/i.exec((err as Error).message);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** The run's last position, for a conflict whose message did not say it. */
async function lastPosition(context: TransportContext, runId: string): Promise<number> {
  try {
    const last = await getStoredMessage(
      context,
      context.layout.journalStream,
      context.streams.journalReplicas,
      {
        last_by_subj: context.layout.journalSubject(runId),
      },
    );
    return last?.seq ?? 0;
  } catch {
    // Only the conflict's detail is lost; the conflict itself stands.
    return -1;
  }
}
