/**
 * Journal appends whose outcome is unknown: the publish went out, but its PubAck never came back
 * (the stream leader died or lost its quorum before answering, the ack timed out, or no leader
 * was there to answer). In a replicated stream this is the normal face of a leader change: the
 * record may be stored on the new leader, or nowhere. The append is retried, and the stream's own
 * state says whether the first attempt landed, so the retry neither duplicates it nor fails the
 * run for a conflict with itself:
 *
 * 1. Every append carries a `Nats-Msg-Id` unique to that append (this process's random nonce and
 *    a counter; kept across its retries). Within the stream's duplicate window (two minutes by
 *    default, far above the retry budget) the server answers a retry of a stored message with
 *    the first one's sequence (`duplicate: true`) before it checks the expected sequence.
 * 2. Before each retry, and when a retry is refused for a wrong last sequence, the subject's last
 *    message is read: when it carries this append's message id, the first attempt landed there
 *    and that is the append's position. This also covers a new leader whose de-duplication state
 *    lacks the message.
 * 3. A refusal for a wrong last sequence whose last message is another writer's stays a
 *    JournalConflictError: fencing is unchanged.
 * 4. Bounded: each attempt waits for its ack at most {@link attemptTimeoutMs} (2 s, or the request
 *    timeout when shorter: a publish sent to a leader that died or hangs is never answered, and
 *    a new leader is elected within seconds), each read-back as long; retries stop after
 *    {@link retryBudgetMs} (three request timeouts) from the first attempt, or at close(). The last
 *    error is thrown, mapped as any other (BackendUnavailableError).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errors as natsErrors, type MsgHdrs } from '@nats-io/transport-node';
import { JetStreamApiError, type PubAck } from '@nats-io/jetstream';
import type { TransportContext } from './context.js';
import { hasCauseNamed } from './errors.js';
import { getStoredMessage } from './stream-reader.js';
import type { AppendRetryStats } from './message-ids.js';

export const MSG_ID = 'Nats-Msg-Id';
/** JetStream API error: the subject's last sequence is not the expected one. */
export const WRONG_LAST_SEQUENCE = 10071;
/** JetStream API errors of a cluster between leaders (errors.ts maps them to unavailability). */
const LEADERLESS_CODES: ReadonlySet<number> = new Set([10008, 10009]);

/** Backoff between attempts: doubles from this, up to {@link MAX_BACKOFF_MS}. */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1_000;

/** How long one attempt waits for its ack, and one read-back for its answer. */
export function attemptTimeoutMs(context: TransportContext): number {
  return Math.min(ATTEMPT_TIMEOUT_MS, context.options.requestTimeoutMs);
}
const ATTEMPT_TIMEOUT_MS = 2_000;

/** How long an append may keep retrying after its first attempt began. */
export function retryBudgetMs(context: TransportContext): number {
  return 3 * context.options.requestTimeoutMs;
}

/**
 * True when `err` leaves the append's outcome unknown or says the stream has no leader right now:
 * worth another attempt. A refusal (wrong sequence, too large, permission) is not.
 */
export function isOutcomeUnknown(err: unknown): boolean {
  if (err instanceof JetStreamApiError) return LEADERLESS_CODES.has(err.code);
  return (
    err instanceof natsErrors.TimeoutError ||
    // Between leaders no server may answer the subject: the publisher's "no responders".
    hasCauseNamed(err, 'JetStreamNotEnabled')
  );
}

/**
 * Publishes one journal record with `headers` (which must hold this append's {@link MSG_ID}),
 * retrying while the outcome is unknown; resolves with the record's sequence. Throws the last
 * error as nats.js raised it (a wrong last sequence that is not this append's own doing included).
 */
export async function publishWithRetry(
  context: TransportContext,
  subject: string,
  data: Uint8Array,
  headers: MsgHdrs,
  stats: AppendRetryStats,
): Promise<number> {
  const msgId = headers.get(MSG_ID);
  const deadline = Date.now() + retryBudgetMs(context);
  let backoff = FIRST_BACKOFF_MS;
  for (let attempt = 1; ; attempt++) {
    let ack: PubAck;
    try {
      ack = await context.session.publisher.publish(subject, data, headers, attemptTimeoutMs(context));
    } catch (err) {
      const refusedForSequence = err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE;
      if (attempt > 1 && refusedForSequence) {
        // Perhaps refused because an earlier attempt is the last record (invariant 2).
        const landed = await landedAt(context, subject, msgId);
        if (landed !== undefined) {
          stats.landedEarlier++;
          return landed;
        }
      }
      if (!isOutcomeUnknown(err) || Date.now() + backoff >= deadline || context.closing.aborted) throw err;
      if (attempt === 1) stats.retried++;
      await sleep(backoff, undefined, { signal: context.closing }).catch(() => undefined);
      if (context.closing.aborted) throw err;
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
      const landed = await landedAt(context, subject, msgId);
      if (landed !== undefined) {
        stats.landedEarlier++;
        return landed;
      }
      continue;
    }
    if (ack.duplicate === true && attempt > 1) stats.landedEarlier++;
    return ack.seq;
  }
}

/**
 * The sequence of the subject's last record when it carries `msgId`, else undefined (also when the
 * read fails: the retry's de-duplication still protects the append).
 */
async function landedAt(
  context: TransportContext,
  subject: string,
  msgId: string,
): Promise<number | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gaveUp = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), attemptTimeoutMs(context));
  });
  try {
    const read = getStoredMessage(context, context.layout.journalStream, context.streams.journalReplicas, {
      last_by_subj: subject,
    });
    read.catch(() => undefined); // it may settle after this stopped waiting
    const last = await Promise.race([read, gaveUp]);
    return last !== null && last.header?.get(MSG_ID) === msgId ? last.seq : undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
