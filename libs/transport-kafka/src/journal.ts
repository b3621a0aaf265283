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
 *    sequence numbers start afresh), the append is retried here (append-retry.ts, shared with the
 *    group logs), for at most three request timeouts. Every append carries a header
 *    {@link APPEND_ID} unique to it and kept across its attempts; before each new attempt the run's
 *    records from the lowest offset the append could have landed at are read back, and an attempt
 *    that landed is answered with its own position.
 * 3. A first attempt may still become visible after that read-back (committed once the new leader's
 *    high watermark moves). Reads therefore keep only the first record of each append id: a
 *    duplicate written by a retry is never replayed.
 *
 * A process that dies during an append retries nothing: the run is resumed elsewhere from its
 * checkpoint, under a new epoch, and the dead process's record (landed or not) is fenced by epoch.
 */
import { PayloadTooLargeError } from '@baton/core';
import type { JournalAppend, JournalLog, JournalRecord, StreamStartHint } from '@baton/core/adapter';
import { APPEND_ID, appendWithRetry, type AppendRetryStats } from './append-retry.js';
import { partitionForKey } from './layout.js';
import type { KafkaContext, KafkaGuard } from './context.js';

/**
 * The transport's journal, for the transport to wrap in core's `checkedJournal` (run ids, expected
 * positions, empty ranges) and its lifecycle guard; `entered` runs work on the open transport's
 * context without another closed check (the guard made it). `appendStats` counts its lost-ack
 * path (append-retry.ts).
 */
export function kafkaJournal(entered: KafkaGuard, appendStats: AppendRetryStats): JournalLog {
  return {
    supportsOptimisticAppend: false,
    scansSharedLog: true,
    /** A run's records share partitions with other runs': they go with the topic's `retention.ms`. */
    purgeMode: 'retention',
    append: (append) =>
      entered('journal.append', false, (context) => appendJournalRecord(context, append, appendStats)),
    read: (runId, afterPosition, uptoPosition) =>
      entered('journal.read', true, (context) => readJournal(context, runId, afterPosition, uptoPosition)),
    /**
     * A documented no-op: a run's journal records share partitions with other runs', and Kafka
     * deletes only whole segments by age, so they stay until the journal topic's `retention.ms`
     * (option `journalRetentionMs`, docs/retention.md). See `purgeMode`.
     */
    purge: () => entered('journal.purge', false, async () => undefined),
  };
}

export async function appendJournalRecord(
  context: KafkaContext,
  append: JournalAppend,
  stats?: AppendRetryStats,
): Promise<number> {
  const { options, layout, topics } = context;
  if (append.data.byteLength > options.maxMessageBytes) {
    throw new PayloadTooLargeError(
      `journal record of run ${append.runId}`,
      append.data.byteLength,
      options.maxMessageBytes,
    );
  }
  const partition = partitionForKey(append.runId, topics.journalPartitions);
  const offset = await appendWithRetry(
    context,
    {
      topic: layout.journalTopic,
      partition,
      key: append.runId,
      value: Buffer.from(append.data),
      // The record lands after the run's last known record.
      floor: append.expectedLastPosition ?? 0,
    },
    (from) => context.tails.read(partition, append.runId, from, undefined),
    stats,
  );
  return offset + 1;
}

export async function readJournal(
  context: KafkaContext,
  runId: string,
  afterPosition: number,
  uptoPosition?: number,
): Promise<JournalRecord[]> {
  const { topics } = context;
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

/**
 * How far before a run's start a stream read from the beginning starts: the broker stamps records
 * with its own clock, the run's start is on the store's, and the two may disagree.
 */
const STREAM_START_MARGIN_MS = 5 * 60_000;

/**
 * Where a read of a run stream from position 0 may start (core's run-stream-log.ts): the offset of
 * the first record its partition received after the run's start (less a margin), found with one
 * ListOffsets-by-time request, so a stream's first read scans the partition's traffic since the
 * run began rather than the whole partition. A partition with no record since answers its end.
 */
export function streamStartHint(entered: KafkaGuard): StreamStartHint {
  return (key, sinceMs) =>
    entered('runStreams.start', true, async (context) => {
      const partition = partitionForKey(key, context.topics.journalPartitions);
      const offsets = await context.admin.fetchTopicOffsetsByTimestamp(
        context.layout.journalTopic,
        Math.max(0, sinceMs - STREAM_START_MARGIN_MS),
      );
      const offset = Number(offsets.find((o) => o.partition === partition)?.offset ?? 0);
      // Position p is offset p - 1, and a read after position p starts at offset p.
      return Number.isSafeInteger(offset) && offset > 0 ? offset : 0;
    });
}
