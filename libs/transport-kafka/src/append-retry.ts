/**
 * A keyed append whose acknowledgement may be lost, retried without failing when its first
 * attempt landed: the journal (journal.ts) and the group logs (group-log.ts) both append through
 * it. The layers it adds to the idempotent producer are described in journal.ts's module doc; in
 * short, every append carries a header {@link APPEND_ID} unique to it and kept across its attempts,
 * and before each new attempt the key's records from the lowest offset the append could have landed
 * at are read back: an attempt found there is answered with its own offset.
 *
 * Bounded: at most three request timeouts from the first attempt, then the last error.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PayloadTooLargeError } from '@baton/core';
import type { KafkaContext } from './context.js';
import { BackendAuthError, BackendPermissionError } from '@baton/core/adapter';
import { kafkaRequestFailed, toKafkaError } from './errors.js';
import type { FetchedRecord } from './partition-reader.js';

/** Header naming the append a record belongs to: `<process nonce>-<counter>`. */
export const APPEND_ID = 'baton-append-id';
const NONCE = randomBytes(8).toString('hex');
let appendCounter = 0;

const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1_000;

/** Counters of the lost-ack path, for tests and logs. */
export interface AppendRetryStats {
  /** Appends whose first attempt failed with an outcome worth retrying. */
  retried: number;
  /** Of those, appends the read-back found landed: answered without writing again. */
  foundLanded: number;
}

/** One keyed record to append to a named partition. */
export interface KeyedAppend {
  topic: string;
  partition: number;
  key: string;
  value: Buffer;
  /**
   * The lowest offset the record can land at, known before it is sent (a position the caller knows
   * is taken): the read-back starts at the higher of it and this producer's acknowledged end.
   */
  floor: number;
}

/**
 * Reads the key's records of the partition from `from` to the end (acknowledged records only), for
 * the read-back.
 */
export type ReadBack = (from: number) => Promise<FetchedRecord[]>;

/** Appends `append`; resolves with its offset once acknowledged with acks=all, or found landed. */
export async function appendWithRetry(
  context: KafkaContext,
  append: KeyedAppend,
  readBack: ReadBack,
  stats?: AppendRetryStats,
): Promise<number> {
  const { options, producer } = context;
  const appendId = `${NONCE}-${(++appendCounter).toString(36)}`;
  // The record lands after anything this producer was acknowledged on the partition: the
  // read-back starts there (or at the caller's floor, when that is higher).
  const floor = Math.max(append.floor, producer.ackedEnd(append.topic, append.partition));
  const deadline = Date.now() + 3 * options.requestTimeoutMs;
  let backoff = FIRST_BACKOFF_MS;
  let retried = false;
  for (;;) {
    try {
      const offset = await producer.send({
        topic: append.topic,
        partition: append.partition,
        key: append.key,
        value: append.value,
        headers: { [APPEND_ID]: appendId },
      });
      if (offset >= floor) return offset;
      // An offset below one known taken is another record's: the broker took the batch for a
      // duplicate of one it stored under the same producer sequence numbers. Whether this record
      // was written is unknown, so it goes the lost-ack way, through a new producer session.
      producer.endSession();
      throw kafkaRequestFailed(
        `kafka transport append at ${options.displayBrokers}: the brokers answered offset ${offset} of ` +
          `${append.topic}/${append.partition}, below ${floor}, which is taken; the append is read back and retried`,
      );
    } catch (err) {
      if (!isOutcomeUnknown(err, options.displayBrokers) || Date.now() + backoff > deadline) throw err;
      if (!retried && stats) stats.retried++;
      retried = true;
      await sleep(backoff);
      backoff = Math.min(2 * backoff, MAX_BACKOFF_MS);
      const landed = await readBack(floor)
        .then((records) => records.find((r) => r.headers[APPEND_ID] === appendId)?.offset)
        .catch(() => undefined);
      if (landed !== undefined) {
        if (stats) stats.foundLanded++;
        return landed;
      }
    }
  }
}

/** Broker answers that refuse the record itself: another attempt would be refused the same way. */
const REFUSALS =
  /MESSAGE_TOO_LARGE|RECORD_LIST_TOO_LARGE|INVALID_RECORD|CORRUPT_MESSAGE|INVALID_TOPIC|INVALID_REQUIRED_ACKS|AUTHORIZATION_FAILED|UNSUPPORTED/;

/**
 * True when the error may leave the append's outcome unknown: anything but a refusal of the record
 * (too large, invalid, not authorized) or a bad configuration. During a leader change kafkajs also
 * gives up with errors it marks as not retriable (an out-of-order sequence after the new leader
 * lost the producer's last batch, its retries exhausted): those are exactly the ones to read back.
 */
function isOutcomeUnknown(err: unknown, brokers: string): boolean {
  if (err instanceof PayloadTooLargeError) return false;
  const mapped = toKafkaError(err, { brokers, operation: 'append' });
  if (mapped instanceof BackendAuthError || mapped instanceof BackendPermissionError) return false;
  if (mapped.code === 'BATON_CONFIG') return false;
  return !REFUSALS.test(`${mapped.message} ${errorTypes(err)}`);
}

/** The kafkajs `type` fields along an error's cause chain. */
function errorTypes(err: unknown): string {
  const types: string[] = [];
  let current = err as { type?: unknown; originalError?: unknown; cause?: unknown } | undefined;
  for (let i = 0; i < 6 && current !== undefined && current !== null; i++) {
    if (typeof current.type === 'string') types.push(current.type);
    current = (current.originalError ?? current.cause) as typeof current;
  }
  return types.join(' ');
}
