/**
 * Reads a partition from an offset, outside any consumer group. kafkajs has no public API for that
 * (its consumer only reads what a group assigns it), so this file, and only this file, uses its
 * internal Cluster, created through the client's own factory so it shares the client's brokers,
 * TLS, SASL and retry settings. kafkajs 2.2.4 is pinned exactly and in maintenance: the internals
 * used here (Cluster.findLeaderForPartitions, findBroker, findGroupCoordinator, Broker.fetch,
 * Broker.offsetCommit) do not move. The run queue reads its owned partitions through it too
 * (partitionOwnership 'presence', presence-reader.ts). Replacing kafkajs means replacing this
 * file with the new client's assign+seek.
 */
import type { Kafka } from 'kafkajs';

export interface FetchedRecord {
  offset: number;
  key: string | null;
  value: Buffer;
  headers: Record<string, string>;
}

interface RawMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, Buffer | string | Array<Buffer | string> | undefined>;
  isControlRecord?: boolean;
}

interface InternalBroker {
  fetch(request: {
    maxWaitTime: number;
    minBytes: number;
    maxBytes: number;
    isolationLevel: number;
    topics: Array<{
      topic: string;
      partitions: Array<{ partition: number; fetchOffset: string; maxBytes: number }>;
    }>;
  }): Promise<{
    responses: Array<{
      topicName: string;
      partitions: Array<{
        partition: number;
        errorCode: number;
        highWatermark: string;
        messages: RawMessage[];
      }>;
    }>;
  }>;
}

interface InternalCoordinator {
  offsetCommit(request: {
    groupId: string;
    groupGenerationId: number;
    memberId: string;
    topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>;
  }): Promise<unknown>;
}

interface InternalCluster {
  findGroupCoordinator(query: { groupId: string }): Promise<InternalCoordinator>;
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  refreshMetadata(): Promise<void>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(query: { nodeId: string }): Promise<InternalBroker>;
}

type CreateCluster = (options: Record<string, unknown>) => InternalCluster;

const CREATE_CLUSTER = 'private:Kafka:createCluster';
/** kafkajs's READ_UNCOMMITTED: the transport writes no transactions. */
const READ_UNCOMMITTED = 0;
/** Bytes asked for per fetch; the broker still returns a whole first batch if it is larger. */
const FETCH_BYTES = 1024 * 1024;

/** A header value as a string (kafkajs gives Buffers, or arrays for repeated headers). */
export function headerText(value: Buffer | string | Array<Buffer | string> | undefined): string | undefined {
  if (value === undefined) return undefined;
  const one = Array.isArray(value) ? value[value.length - 1] : value;
  return one === undefined ? undefined : one.toString();
}

export function headersOf(raw: RawMessage['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    const text = headerText(value);
    if (text !== undefined) headers[name] = text;
  }
  return headers;
}

/**
 * True for kafkajs's answer to a fetch at an offset outside the partition (below its log start
 * offset, gone to retention or deleteRecords; or past its end): another attempt cannot help.
 */
export function isOffsetOutOfRange(err: unknown): boolean {
  return (err as { name?: unknown } | null | undefined)?.name === 'KafkaJSOffsetOutOfRange';
}

export class PartitionReader {
  private readonly cluster: InternalCluster;

  constructor(kafka: Kafka, topics: string[]) {
    const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER);
    const create =
      symbol === undefined ? undefined : (kafka as unknown as Record<symbol, CreateCluster>)[symbol];
    if (typeof create !== 'function') {
      throw new Error(
        'kafka transport: this kafkajs build lacks the internal cluster factory the journal reader needs; install kafkajs 2.2.4 exactly',
      );
    }
    this.cluster = create({
      metadataMaxAge: 300_000,
      allowAutoTopicCreation: false,
      isolationLevel: READ_UNCOMMITTED,
    });
    this.topics = topics;
  }

  private readonly topics: string[];

  async connect(): Promise<void> {
    await this.cluster.connect();
    await this.cluster.addMultipleTargetTopics(this.topics);
  }

  disconnect(): Promise<void> {
    return this.cluster.disconnect();
  }

  /**
   * Records of `topic`/`partition` from `fromOffset` up to `toOffset` (inclusive; else up to the
   * end as it was at the first fetch) for which `accept` returns true, in offset order.
   */
  async read(
    topic: string,
    partition: number,
    fromOffset: number,
    toOffset: number | undefined,
    accept: (key: string | null) => boolean,
  ): Promise<FetchedRecord[]> {
    return (await this.readUpTo(topic, partition, fromOffset, toOffset, accept)).records;
  }

  /**
   * {@link read}, also answering `next`: one past the last offset it saw, so every offset from
   * `next` up to `toOffset` was not visible (above the high watermark the leader answered with).
   */
  async readUpTo(
    topic: string,
    partition: number,
    fromOffset: number,
    toOffset: number | undefined,
    accept: (key: string | null) => boolean,
  ): Promise<{ records: FetchedRecord[]; next: number }> {
    const found: FetchedRecord[] = [];
    let next = fromOffset;
    let end = toOffset === undefined ? undefined : toOffset + 1; // exclusive
    while (end === undefined || next < end) {
      const { messages, highWatermark } = await this.fetchOnce(topic, partition, next);
      end ??= highWatermark;
      if (end > highWatermark) end = highWatermark; // asked beyond what exists: stop at the end
      let advanced = false;
      for (const message of messages) {
        const offset = Number(message.offset);
        if (offset < next) continue; // a batch may start before the offset asked for
        if (offset >= end) break;
        next = offset + 1;
        advanced = true;
        if (message.isControlRecord) continue;
        const key = message.key === null ? null : message.key.toString();
        if (!accept(key)) continue;
        found.push({
          offset,
          key,
          value: message.value ?? Buffer.alloc(0),
          headers: headersOf(message.headers),
        });
      }
      if (!advanced) break; // nothing more below the end (an empty or compacted range)
    }
    return { records: found, next };
  }

  /**
   * How far the front of `topic`/`partition` from `fromOffset` may go: the first offset below the
   * end (as it was at the first fetch) whose record `removable` refuses (given its key and offset;
   * a control record or one without a key is never removable), or that end when it refuses none.
   * Stops fetching at the first refused record.
   */
  async removablePrefixEnd(
    topic: string,
    partition: number,
    fromOffset: number,
    removable: (key: string, offset: number) => boolean,
  ): Promise<number> {
    let next = fromOffset;
    let end: number | undefined;
    while (end === undefined || next < end) {
      const { messages, highWatermark } = await this.fetchOnce(topic, partition, next);
      end ??= highWatermark;
      let advanced = false;
      for (const message of messages) {
        const offset = Number(message.offset);
        if (offset < next) continue; // a batch may start before the offset asked for
        if (offset >= end) break;
        if (message.isControlRecord || message.key === null || !removable(message.key.toString(), offset)) {
          return offset;
        }
        next = offset + 1;
        advanced = true;
      }
      if (!advanced) break;
    }
    return next;
  }

  /**
   * One fetch request per leader broker for `positions` (partition -> next offset) of `topic`,
   * waiting up to `maxWaitMs` on the broker for a first record: per partition, the records at or
   * after its offset (control records left out) and the offset to fetch next. Throws kafkajs's
   * KafkaJSOffsetOutOfRange (naming the partition) when an offset is no longer in its partition.
   * Long polls hold their broker connection: the run queue gives them a reader of their own.
   */
  async pollMany(
    topic: string,
    positions: ReadonlyMap<number, number>,
    maxWaitMs: number,
  ): Promise<Map<number, { records: FetchedRecord[]; next: number }>> {
    const found = new Map<number, { records: FetchedRecord[]; next: number }>();
    if (positions.size === 0) return found;
    const leaders = this.cluster.findLeaderForPartitions(topic, [...positions.keys()]);
    await Promise.all(
      Object.entries(leaders).map(async ([nodeId, partitions]) => {
        const broker = await this.cluster.findBroker({ nodeId });
        const { responses } = await broker.fetch({
          maxWaitTime: maxWaitMs,
          minBytes: 1,
          maxBytes: FETCH_BYTES,
          isolationLevel: READ_UNCOMMITTED,
          topics: [
            {
              topic,
              partitions: partitions.map((partition) => ({
                partition,
                fetchOffset: String(positions.get(partition)),
                maxBytes: FETCH_BYTES,
              })),
            },
          ],
        });
        for (const data of responses.find((r) => r.topicName === topic)?.partitions ?? []) {
          const from = positions.get(data.partition);
          if (from === undefined) continue;
          const records: FetchedRecord[] = [];
          let next = from;
          for (const message of data.messages) {
            const at = Number(message.offset);
            if (at < next) continue; // a batch may start before the offset asked for
            next = at + 1;
            if (message.isControlRecord) continue;
            records.push({
              offset: at,
              key: message.key === null ? null : message.key.toString(),
              value: message.value ?? Buffer.alloc(0),
              headers: headersOf(message.headers),
            });
          }
          found.set(data.partition, { records, next });
        }
      }),
    );
    return found;
  }

  /** Fresh metadata, after a fetch failed on a moved leader. */
  refreshMetadata(): Promise<void> {
    return this.cluster.refreshMetadata();
  }

  /**
   * Commits offsets of `topic` for `groupId` as a consumer outside the group does (generation -1,
   * no member id): the group's coordinator takes them while the group has no members, and refuses
   * them (an error naming the generation or member) while a consumer-group member is in it.
   */
  async commitOffsets(
    groupId: string,
    topic: string,
    offsets: ReadonlyArray<{ partition: number; offset: number }>,
  ): Promise<void> {
    const coordinator = await this.cluster.findGroupCoordinator({ groupId });
    await coordinator.offsetCommit({
      groupId,
      groupGenerationId: -1,
      memberId: '',
      topics: [
        { topic, partitions: offsets.map((o) => ({ partition: o.partition, offset: String(o.offset) })) },
      ],
    });
  }

  private async fetchOnce(
    topic: string,
    partition: number,
    offset: number,
  ): Promise<{ messages: RawMessage[]; highWatermark: number }> {
    for (let attempt = 1; ; attempt++) {
      try {
        const leaders = this.cluster.findLeaderForPartitions(topic, [partition]);
        const nodeId = Object.keys(leaders)[0];
        if (nodeId === undefined) throw new Error(`no leader known for ${topic}/${partition}`);
        const broker = await this.cluster.findBroker({ nodeId });
        const { responses } = await broker.fetch({
          maxWaitTime: 0,
          minBytes: 1,
          maxBytes: FETCH_BYTES,
          isolationLevel: READ_UNCOMMITTED,
          topics: [
            { topic, partitions: [{ partition, fetchOffset: String(offset), maxBytes: FETCH_BYTES }] },
          ],
        });
        const data = responses
          .find((r) => r.topicName === topic)
          ?.partitions.find((p) => p.partition === partition);
        return { messages: data?.messages ?? [], highWatermark: Number(data?.highWatermark ?? offset) };
      } catch (err) {
        // A moved leader or stale metadata heals with fresh metadata; anything else is reported.
        if (attempt >= 3 || isOffsetOutOfRange(err)) throw err;
        await this.cluster.refreshMetadata().catch(() => undefined);
      }
    }
  }
}
