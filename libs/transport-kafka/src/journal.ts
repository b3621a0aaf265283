/**
 * The journal on Kafka: one topic keyed by run id, so each run's records live on one partition in
 * order. A record's position is its offset + 1 (position 0 means "empty journal"). A tail is read by
 * fetching the run's partition from the position after the checkpoint and keeping the run's key.
 *
 * Kafka cannot refuse an append conditionally, so `expectedLastPosition` is not enforced
 * (`supportsOptimisticAppend` is false): a zombie's late append may land, and replay ignores it
 * because its epoch is older than a later LeaseAcquired marker; checkpoints stay fenced by the store.
 */
import { PayloadTooLargeError } from '@baton/core';
import type { JournalAppend, JournalRecord } from '@baton/core/adapter';
import { partitionForKey } from './layout.js';
import type { KafkaContext } from './context.js';

export async function appendJournalRecord(context: KafkaContext, append: JournalAppend): Promise<number> {
  const { options, layout, topics } = context;
  if (append.data.byteLength > options.maxMessageBytes) {
    throw new PayloadTooLargeError(
      `journal record of run ${append.runId}`,
      append.data.byteLength,
      options.maxMessageBytes,
    );
  }
  const offset = await context.producer.send({
    topic: layout.journalTopic,
    partition: partitionForKey(append.runId, topics.journalPartitions),
    key: append.runId,
    value: Buffer.from(append.data),
  });
  return offset + 1;
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
  return records.map((r) => ({ position: r.offset + 1, data: new Uint8Array(r.value) }));
}
