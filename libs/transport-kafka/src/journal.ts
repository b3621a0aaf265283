/**
 * The journal on Kafka: one topic keyed by run id, so each run's records live on one partition in
 * order. A record's position is its offset + 1 (position 0 means "empty journal"). A tail is read by
 * fetching the run's partition from the position after the checkpoint and keeping the run's key.
 *
 * Kafka cannot refuse an append conditionally, so `expectedLastPosition` is not enforced
 * (`supportsOptimisticAppend` is false): a zombie's late append may land, and replay ignores it
 * because its epoch is older than a later LeaseAcquired marker; checkpoints stay fenced by the store.
 *
 * Lost acknowledgements (a leader change while a produce request is in flight). Three layers keep
 * a retried append from duplicating an entry or failing a run whose first attempt landed:
 *
 * 1. Inside one producer session the idempotent producer (acks=all) retries with the same sequence
 *    numbers, and the partition's new leader, which replicated the producer's state, answers a
 *    retry of a stored batch with the stored offset instead of writing it again.
 * 2. When kafkajs gives up (its retries exhausted, or a new producer session after a reconnect, whose
 *    sequence numbers start afresh), this file retries the append itself, for at most three request
 *    timeouts. Every append carries a header {@link APPEND_ID} unique to it and kept across its
 *    attempts; before each new attempt the run's records from the lowest offset the append could
 *    have landed at are read back, and an attempt that landed is answered with its own position.
 * 3. A first attempt may still become visible after that read-back (committed once the new leader's
 *    high watermark moves). Reads therefore keep only the first record of each append id: a
 *    duplicate written by a retry is never replayed.
 *
 * A process that dies during an append retries nothing: the run is resumed elsewhere from its
 * checkpoint, under a new epoch, and the dead process's record (landed or not) is fenced by epoch.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PayloadTooLargeError } from '@baton/core';
import type { JournalAppend, JournalRecord } from '@baton/core/adapter';
import { partitionForKey } from './layout.js';
import type { KafkaContext } from './context.js';
import { KafkaAuthError, KafkaPermissionError, toKafkaError } from './errors.js';

/** Header naming the append a journal record belongs to: `<process nonce>-<counter>`. */
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

export async function appendJournalRecord(
  context: KafkaContext,
  append: JournalAppend,
  stats?: AppendRetryStats,
): Promise<number> {
  const { options, layout, topics, producer } = context;
  if (append.data.byteLength > options.maxMessageBytes) {
    throw new PayloadTooLargeError(
      `journal record of run ${append.runId}`,
      append.data.byteLength,
      options.maxMessageBytes,
    );
  }
  const topic = layout.journalTopic;
  const partition = partitionForKey(append.runId, topics.journalPartitions);
  const appendId = `${NONCE}-${(++appendCounter).toString(36)}`;
  // The record lands after the run's last known record and after anything this producer was
  // acknowledged on the partition: the read-back starts there.
  const floor = Math.max(append.expectedLastPosition ?? 0, producer.ackedEnd(topic, partition));
  const deadline = Date.now() + 3 * options.requestTimeoutMs;
  let backoff = FIRST_BACKOFF_MS;
  let retried = false;
  for (;;) {
    try {
      const offset = await producer.send({
        topic,
        partition,
        key: append.runId,
        value: Buffer.from(append.data),
        headers: { [APPEND_ID]: appendId },
      });
      return offset + 1;
    } catch (err) {
      if (!isOutcomeUnknown(err, options.displayBrokers) || Date.now() + backoff > deadline) throw err;
      if (!retried && stats) stats.retried++;
      retried = true;
      await sleep(backoff);
      backoff = Math.min(2 * backoff, MAX_BACKOFF_MS);
      const landed = await findAppend(context, partition, append.runId, floor, appendId).catch(
        () => undefined,
      );
      if (landed !== undefined) {
        if (stats) stats.foundLanded++;
        return landed + 1;
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
  const mapped = toKafkaError(err, { brokers, operation: 'journal append' });
  if (mapped instanceof KafkaAuthError || mapped instanceof KafkaPermissionError) return false;
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

/** The offset of the record carrying `appendId` among the run's records from `from`, if any. */
async function findAppend(
  context: KafkaContext,
  partition: number,
  runId: string,
  from: number,
  appendId: string,
): Promise<number | undefined> {
  const records = await context.tails.read(partition, runId, from, undefined);
  return records.find((r) => r.headers[APPEND_ID] === appendId)?.offset;
}

export async function readJournal(
  context: KafkaContext,
  runId: string,
  afterPosition: number,
  uptoPosition?: number,
): Promise<JournalRecord[]> {
  const { topics } = context;
  if (uptoPosition !== undefined && uptoPosition <= afterPosition) return [];
  const partition = partitionForKey(runId, topics.journalPartitions);
  // Position p is offset p - 1: records after `afterPosition` start at offset `afterPosition`.
  const records = await context.tails.read(
    partition,
    runId,
    Math.max(0, afterPosition),
    uptoPosition === undefined ? undefined : uptoPosition - 1,
  );
  // A retried append that landed twice is replayed once: its first copy (layer 3 above).
  const seen = new Set<string>();
  const kept = records.filter((r) => {
    const id = r.headers[APPEND_ID];
    if (id === undefined) return true;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  return kept.map((r) => ({ position: r.offset + 1, data: new Uint8Array(r.value) }));
}
