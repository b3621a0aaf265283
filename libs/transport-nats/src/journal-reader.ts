/**
 * Reads the records of one run's subject in a sequence range.
 *
 * Why two methods: measured through this transport on nats-server 2.9.10, one server on
 * localhost (shared, 2 cores), file storage, 300-byte records in a journal also holding other
 * runs' records; p50 of 200 reads, ms:
 *
 * | records in the range                    |    0 |    1 |   5 |  20 |  100 |
 * |-----------------------------------------|------|------|-----|-----|------|
 * | direct get (next_by_subj), one a record | 0.28 | 0.51 | 1.6 | 4.6 | 24.5 |
 * | ephemeral consumer (create, pull, drop) | 0.70 | 0.99 | 1.1 | 1.1 |  1.8 |
 * | two gets, then a consumer (chosen)      | 0.22 | 0.54 | 1.6 | 1.5 |  2.2 |
 *
 * A get costs ~0.25 ms a record; a consumer ~0.7 ms once and little per record. A run's first
 * claim reads one record (its own lease marker) and a resume right after a checkpoint about as
 * few, so the first {@link GETS_BEFORE_CONSUMER} records are fetched one by one and a longer
 * tail (up to `checkpointEvery` entries, 100 by default) is streamed by one ephemeral consumer.
 * STREAM.MSG.GET (used when the stream has replicas, see stream-reader.ts) costs about what
 * direct get does for one record and more per record. Both methods work on 2.9; 2.11's batched
 * direct get would read a tail in one request but is not used, so one code path serves every
 * supported server. On a replicated stream the consumer may read a lagging follower's copy, so the
 * leader confirms the tail ({@link readOnFromLeader}).
 */
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { JournalRecord } from '@baton/core/adapter';
import type { TransportContext } from './context.js';
import { ackInfoOf } from './delivery-info.js';
import { pullBatch } from './pull-request.js';
import { getStoredMessage } from './stream-reader.js';

/** Records read one by one before a consumer takes over (see the table above). */
export const GETS_BEFORE_CONSUMER = 2;
/** Messages per pull request of the reading consumer. */
const CONSUMER_BATCH = 1_000;
/** The server removes a reading consumer left behind (a crash between create and delete) after this. */
const CONSUMER_INACTIVE_THRESHOLD_MS = 30_000;

/** The records of `subject` with `after < seq <= upto`, in order. */
export async function readJournalRange(
  context: TransportContext,
  subject: string,
  after: number,
  upto: number | undefined,
): Promise<JournalRecord[]> {
  const { journalStream } = context.layout;
  const records: JournalRecord[] = [];
  let next = after + 1;
  for (let i = 0; i < GETS_BEFORE_CONSUMER; i++) {
    const found = await getStoredMessage(context, journalStream, context.streams.journalReplicas, {
      seq: next,
      next_by_subj: subject,
    });
    if (found === null || (upto !== undefined && found.seq > upto)) return records;
    records.push({ position: found.seq, data: found.data });
    next = found.seq + 1;
  }
  if (upto !== undefined && next > upto) return records;
  records.push(...(await readWithConsumer(context, subject, next, upto)));
  if (context.streams.journalReplicas > 1) {
    inPositionOrder(records);
    await readOnFromLeader(context, subject, records, next - 1, upto);
  }
  return inPositionOrder(records);
}

/**
 * The records in position order, each position once. A position is the record's stream sequence,
 * so two records at one position are one record read twice. A clean-clone CI run (2026-11-30) saw
 * one read of 1,500 records on a replicated stream answer 1,501 while a follower caught up: a
 * record delivered twice by the reading consumer, or read again from the leader after a tail out
 * of order. Either way a resume must see each entry once, in order.
 */
export function inPositionOrder(records: JournalRecord[]): JournalRecord[] {
  records.sort((a, b) => a.position - b.position);
  let kept = 0;
  for (const record of records) {
    if (kept > 0 && records[kept - 1]!.position === record.position) continue;
    records[kept++] = record;
  }
  records.length = kept;
  return records;
}

/**
 * The records the reading consumer missed because it read a follower's copy. A consumer with one
 * replica is placed on any server holding the stream, and a follower that fell behind (frozen,
 * partitioned, restarted) serves its own copy, which lacks the newest records until it has caught
 * up: a resume that read it would run completed steps again. A follower's copy is a prefix of the
 * leader's, so only the tail can be missing: the leader is asked for the next record after the
 * last one read, one by one, until it has none up to `upto`. In the usual case that is one request
 * answered "none".
 */
async function readOnFromLeader(
  context: TransportContext,
  subject: string,
  records: JournalRecord[],
  readUpTo: number,
  upto: number | undefined,
): Promise<void> {
  let after = records.at(-1)?.position ?? readUpTo;
  for (;;) {
    const found = await getStoredMessage(
      context,
      context.layout.journalStream,
      context.streams.journalReplicas,
      {
        seq: after + 1,
        next_by_subj: subject,
      },
    );
    if (found === null || (upto !== undefined && found.seq > upto)) return;
    records.push({ position: found.seq, data: found.data });
    after = found.seq;
  }
}

/** Streams the records from sequence `from` with one ephemeral, unacknowledged consumer. */
async function readWithConsumer(
  context: TransportContext,
  subject: string,
  from: number,
  upto: number | undefined,
): Promise<JournalRecord[]> {
  const { jsm, nc, permissions } = context.session;
  const stream = context.layout.journalStream;
  const info = await jsm.consumers.add(stream, {
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: from,
    filter_subject: subject,
    inactive_threshold: nanos(CONSUMER_INACTIVE_THRESHOLD_MS),
    mem_storage: true,
    num_replicas: 1,
  });
  const records: JournalRecord[] = [];
  try {
    // num_pending counts the subject's records from `from` when the consumer was made; later
    // appends are beyond what the caller asked to see.
    let remaining = info.num_pending;
    while (remaining > 0) {
      const { messages } = await pullBatch(nc, permissions, {
        subject: `$JS.API.CONSUMER.MSG.NEXT.${stream}.${info.name}`,
        batch: Math.min(remaining, CONSUMER_BATCH),
        noWait: true,
        timeoutMs: context.options.requestTimeoutMs,
      });
      if (messages.length === 0) break;
      remaining -= messages.length;
      for (const msg of messages) {
        const position = ackInfoOf(msg.reply).streamSequence;
        if (upto !== undefined && position > upto) return records;
        records.push({ position, data: new Uint8Array(msg.data) });
      }
    }
    return records;
  } finally {
    // Not awaited: the reader has its records; the inactive threshold covers a failed delete.
    context.track(jsm.consumers.delete(stream, info.name).catch(() => undefined));
  }
}
