/**
 * Group logs on Kafka (group commit across runs, contracts/group-journal.ts): every log's records go
 * to the topic `<prefix>.journal.groups`, keyed by the log's name, so a log's records live on one
 * partition in order. A record's position is its offset + 1. Logs that hash to one partition share
 * it, so a log's positions increase but skip the offsets of the others.
 *
 * A topic of its own rather than the journal topic: log names and run ids are drawn from the same
 * alphabet, so on one topic a run whose id is a log's name would read that log's records as its
 * journal; per-run tail scans (which read every record of a partition since a checkpoint) would
 * wade through group records of a few hundred KB each; and the group records' retention can be
 * told apart from the journal's (both take `journalRetentionMs` when the transport creates them).
 *
 * Invariants:
 * 1. An append resolves with the record's position only once the brokers acknowledged it with
 *    acks=all, through the transport's idempotent producer. An append whose acknowledgement was lost
 *    is retried for at most three request timeouts (append-retry.ts): before each new attempt the
 *    log's records are read back from the lowest offset it could have landed at, and an attempt
 *    found there is answered with its own position, so a retry never fails an append that landed.
 * 2. A retry may still leave a second copy of a record (its first attempt became visible only after
 *    the read-back). That copy is harmless: a group record is read only by the position a pointer
 *    names, and the store accepts pointers only to the position the append resolved with, so the
 *    other copy is never read.
 * 3. A read by position answers only records keyed by the log: an offset that holds another log's
 *    record, or none (retention, past the end), is left out (group-reads.ts).
 * 4. A trim removes only records some trim asked for. Kafka cannot delete one key's records, only
 *    every record of a partition below an offset (deleteRecords), so each trim remembers, per log,
 *    the position before which its records were asked to go (such a request is final: a group
 *    log's floor only rises), reads the partition's front, and deletes it up to the first record
 *    not asked for: another log's record above that log's remembered floor, or one of a log no trim
 *    named in this process. The worker's trimmer names every log in one pass (GroupLogTrimmer), so
 *    a partition's front goes as far as every log on it allows; what it cannot reach stays until
 *    the topic's `retention.ms`, as the per-run journal's records do (`journal.purgeMode: 'retention'`,
 *    docs/retention.md).
 * 5. A record larger than `maxMessageBytes` is refused before anything is sent.
 */
import { PayloadTooLargeError } from '@baton/core';
import { checkGroupLogName, type GroupLog } from '@baton/core/adapter';
import { appendWithRetry, type AppendRetryStats } from './append-retry.js';
import type { KafkaContext } from './context.js';
import type { GroupReadStats } from './group-reads.js';
import { partitionForKey } from './layout.js';

/** Counters of a transport's group logs: the append retries and the coalesced reads. */
export interface KafkaGroupLogStats {
  /** readGroupRecords calls served. */
  reads: number;
  /** Ranges fetched: one per run of nearby offsets per scan, however many reads it served. */
  ranges: number;
  /** Records fetched in those ranges, other logs' included (read amplification). */
  fetchedRecords: number;
  /** Appends whose first attempt failed with an outcome worth retrying. */
  appendsRetried: number;
  /** Of those, appends found landed by the read-back: answered without writing again. */
  appendsFoundLanded: number;
}

/** How the group log reaches an open transport: its guard, with read retries or without. */
export type GroupLogGuard = <T>(
  operation: string,
  retryReads: boolean,
  work: (context: KafkaContext) => Promise<T>,
) => Promise<T>;

export class KafkaGroupLog implements GroupLog {
  private readonly appendStats: AppendRetryStats = { retried: 0, foundLanded: 0 };
  /**
   * Per log: one past the offset of its last acknowledged record (its last position). A log is
   * this process's own (the worker names it afresh at start), so its next record lands after it.
   */
  private readonly ends = new Map<string, number>();
  /**
   * Per log: the highest position a trim asked its records to go before (invariant 4). One entry
   * per log ever trimmed through this transport: a worker's logs are one per process life.
   */
  private readonly trimmedBefore = new Map<string, number>();

  /** @internal the transport makes it: use `transport.groupLog` */
  constructor(
    private readonly guard: GroupLogGuard,
    /** The transport's read counters, shared with the GroupReads of each connection. */
    private readonly readStats: GroupReadStats,
    /** The producer's largest message (`maxMessageBytes`), read when asked. */
    private readonly maxMessageBytes: () => number,
  ) {}

  maxRecordBytes(): number {
    // Room for the record's key (a log name), headers and Kafka's record framing.
    return Math.max(1, this.maxMessageBytes() - 1024);
  }

  /** The counters so far (a copy). */
  stats(): KafkaGroupLogStats {
    return {
      reads: this.readStats.reads,
      ranges: this.readStats.ranges,
      fetchedRecords: this.readStats.fetchedRecords,
      appendsRetried: this.appendStats.retried,
      appendsFoundLanded: this.appendStats.foundLanded,
    };
  }

  appendGroupRecord(log: string, data: Uint8Array): Promise<number> {
    return this.guard('appendGroupRecord', false, async (context) => {
      checkGroupLogName(log);
      if (data.byteLength > context.options.maxMessageBytes) {
        throw new PayloadTooLargeError(
          `group record of log ${log}`,
          data.byteLength,
          context.options.maxMessageBytes,
        );
      }
      const topic = context.layout.groupTopic;
      const partition = partitionForKey(log, context.topics.groupPartitions);
      const offset = await appendWithRetry(
        context,
        {
          topic,
          partition,
          key: log,
          value: Buffer.from(data),
          floor: this.ends.get(log) ?? (await partitionEnd(context, partition)),
        },
        (from) => context.reader.read(topic, partition, from, undefined, (key) => key === log),
        this.appendStats,
      );
      if (offset + 1 > (this.ends.get(log) ?? 0)) this.ends.set(log, offset + 1);
      return offset + 1;
    });
  }

  readGroupRecords(log: string, positions: readonly number[]): Promise<Map<number, Uint8Array>> {
    return this.guard('readGroupRecords', true, async (context) => {
      checkGroupLogName(log);
      const offsets = [...new Set(positions)]
        .filter((p) => Number.isSafeInteger(p) && p >= 1)
        .map((p) => p - 1);
      const partition = partitionForKey(log, context.topics.groupPartitions);
      const records = await context.groupReads.read(partition, log, offsets);
      const found = new Map<number, Uint8Array>();
      for (const [offset, record] of records) found.set(offset + 1, new Uint8Array(record.value));
      return found;
    });
  }

  trimGroupLog(log: string, beforePosition: number): Promise<void> {
    return this.guard('trimGroupLog', true, async (context) => {
      checkGroupLogName(log);
      if (!Number.isSafeInteger(beforePosition) || beforePosition <= 1) return;
      if (beforePosition > (this.trimmedBefore.get(log) ?? 0)) this.trimmedBefore.set(log, beforePosition);
      const topic = context.layout.groupTopic;
      const partition = partitionForKey(log, context.topics.groupPartitions);
      const bounds = (await context.admin.fetchTopicOffsets(topic)).find((o) => o.partition === partition);
      if (bounds === undefined) return;
      const low = Number(bounds.low);
      if (Number(bounds.high) <= low) return;
      // Position p is offset p - 1: a record may go when its position is below its log's floor.
      const end = await context.reader.removablePrefixEnd(
        topic,
        partition,
        low,
        (key, offset) => offset + 1 < (this.trimmedBefore.get(key) ?? 0),
      );
      if (end <= low) return;
      await context.admin.deleteTopicRecords({ topic, partitions: [{ partition, offset: String(end) }] });
    });
  }
}

/**
 * The partition's high watermark: a log's first record lands at or after it, so a lost
 * acknowledgement of that record is looked for from there, not from the partition's start (which
 * may hold days of other logs' records). 0 when it cannot be read: the append goes ahead, and
 * the producer's acknowledged end still bounds the read-back.
 */
async function partitionEnd(context: KafkaContext, partition: number): Promise<number> {
  try {
    const offsets = await context.admin.fetchTopicOffsets(context.layout.groupTopic);
    return Number(offsets.find((o) => o.partition === partition)?.high ?? 0);
  } catch {
    return 0;
  }
}
