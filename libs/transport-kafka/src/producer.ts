/**
 * One idempotent kafkajs producer per transport, with group commit: every record handed in while a
 * produce request is in flight goes out together in the next request, so many concurrent runs
 * cost one round trip per batch, not one each. kafkajs's idempotent producer keeps one request in
 * flight per partition anyway; this turns that limit into batching instead of queueing.
 *
 * Invariant: each record's promise resolves with its own offset, once the brokers acknowledged it
 * with acks=all; records of one partition keep the order in which they were handed in.
 *
 * A failed request ends the producer session. kafkajs advances a partition's sequence number only
 * when a request is acknowledged, so after a request whose acknowledgement was lost (but which the
 * brokers stored) the next batch of the same size would reuse its sequence numbers, and the broker
 * would answer it as a duplicate with the stored batch's offsets: a different record acknowledged
 * and never written (the likely cause of a record the Kafka cluster spec once found missing).
 * After any failure the next batch goes out through a new idempotent producer (a new producer id,
 * sequences from 0); the journal decides whether the failed records landed by reading them back
 * (journal.ts).
 */
import {
  Partitioners,
  type Kafka,
  type Message,
  type Producer,
  type RecordMetadata,
  type TopicMessages,
} from 'kafkajs';

export interface OutgoingRecord {
  topic: string;
  partition: number;
  key: string | null;
  value: Buffer;
  headers?: Record<string, string>;
}

interface Queued extends OutgoingRecord {
  resolve(offset: number): void;
  reject(err: unknown): void;
}

/** At most this many records per produce request. */
const MAX_BATCH_RECORDS = 1_000;

export class BatchingProducer {
  private producer: Producer;
  /** The producer to use after a failed request; connected before the next batch is sent. */
  private replaced: Promise<void> | undefined;
  private queue: Queued[] = [];
  private flushing = false;
  /** Per `topic/partition`: one past the highest offset this producer was acknowledged. */
  private readonly acked = new Map<string, number>();

  constructor(
    private readonly kafka: Kafka,
    /** Most bytes of record values per request (the broker refuses a batch above its limit). */
    private readonly maxBatchBytes: number,
    /** How long a broker may hold a produce request waiting for the in-sync replicas. */
    private readonly ackTimeoutMs = 30_000,
  ) {
    this.producer = this.create();
  }

  private create(): Producer {
    return this.kafka.producer({
      // Every record names its partition; the partitioner is set only to keep kafkajs quiet.
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent: true,
      allowAutoTopicCreation: false,
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2_000 },
    });
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  async disconnect(): Promise<void> {
    await this.replaced?.catch(() => undefined);
    await this.producer.disconnect();
  }

  /**
   * Ends the session: the next batch goes out through a new idempotent producer. For a caller that
   * was answered an offset its record cannot have (below one it knows is taken): a sign the
   * session's sequence numbers were reused.
   */
  endSession(): void {
    if (this.replaced === undefined) this.replace();
  }

  /** Ends the session after a failed request: the old producer goes, a new one connects. */
  private replace(): void {
    const old = this.producer;
    this.producer = this.create();
    const next = this.producer;
    this.replaced = (async () => {
      await old.disconnect().catch(() => undefined);
      await next.connect();
    })();
    // Awaited by the next batch, if one comes; a failure with none to come is not unhandled.
    this.replaced.catch(() => undefined);
  }

  /**
   * One past the highest offset this producer saw acknowledged on the partition (0 when none): a
   * record sent from now on lands at or after it.
   */
  ackedEnd(topic: string, partition: number): number {
    return this.acked.get(`${topic}/${partition}`) ?? 0;
  }

  /** Sends one record; resolves with its offset in its partition. */
  send(record: OutgoingRecord): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ ...record, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.takeBatch();
        try {
          if (this.replaced !== undefined) {
            const replaced = this.replaced;
            // A new producer that cannot connect fails this batch; the next one tries again.
            await replaced.catch((err: unknown) => {
              this.replace();
              throw err;
            });
            if (this.replaced === replaced) this.replaced = undefined;
          }
          const metadata = await this.producer.sendBatch({
            acks: -1,
            timeout: this.ackTimeoutMs,
            topicMessages: groupByTopic(batch),
          });
          const { ends, unanswered } = settleOffsets(batch, metadata);
          for (const [key, end] of ends) {
            if (end > (this.acked.get(key) ?? 0)) this.acked.set(key, end);
          }
          // A partition the answer left out had its request fail inside kafkajs, which then
          // rewound that partition's sequence: its batch may be stored all the same. Keeping the
          // session would send the next batch there under the same sequence numbers, and the
          // broker would acknowledge it with the stored batch's offsets (see the module doc).
          if (unanswered && this.replaced === undefined) this.replace();
        } catch (err) {
          if (this.replaced === undefined) this.replace();
          for (const record of batch) record.reject(err);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private takeBatch(): Queued[] {
    let bytes = 0;
    let count = 0;
    for (const record of this.queue) {
      if (count > 0 && (bytes + record.value.byteLength > this.maxBatchBytes || count >= MAX_BATCH_RECORDS)) {
        break;
      }
      bytes += record.value.byteLength;
      count++;
    }
    return this.queue.splice(0, count);
  }
}

function groupByTopic(batch: Queued[]): TopicMessages[] {
  const byTopic = new Map<string, Message[]>();
  for (const record of batch) {
    let messages = byTopic.get(record.topic);
    if (messages === undefined) byTopic.set(record.topic, (messages = []));
    messages.push({
      partition: record.partition,
      key: record.key,
      value: record.value,
      ...(record.headers && { headers: record.headers }),
    });
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

/**
 * The brokers report one base offset per partition; the records of a partition got consecutive
 * offsets from it in the order they were sent. A record of a partition the answer leaves out is
 * rejected, and `unanswered` says so: kafkajs (2.2) retries a failed produce request only to the
 * brokers that have not answered yet, so when a partition's leadership moves to a broker that
 * already answered for other partitions, that partition is never sent again and the call resolves
 * without it.
 */
function settleOffsets(
  batch: Queued[],
  metadata: RecordMetadata[],
): { ends: Map<string, number>; unanswered: boolean } {
  let unanswered = false;
  const next = new Map<string, number>();
  for (const m of metadata) {
    const base = m.baseOffset ?? m.offset;
    if (base !== undefined) next.set(`${m.topicName}/${m.partition}`, Number(base));
  }
  for (const record of batch) {
    const key = `${record.topic}/${record.partition}`;
    const offset = next.get(key);
    if (offset === undefined) {
      unanswered = true;
      record.reject(new Error(`the brokers returned no offset for ${key}`));
      continue;
    }
    next.set(key, offset + 1);
    record.resolve(offset);
  }
  return { ends: next, unanswered };
}
