/**
 * The run queue on Kafka, for one priority lane's topic (run-lanes.ts holds the lanes): records of
 * the partitions this member holds, turned into the contract's fetch/ack/nak deliveries. The
 * deliveries, acks and commits are the same whoever decides the partitions (run-buffer.ts); who
 * decides is option `partitionOwnership`, one module per mode:
 *
 * - `group` (group-consumer.ts): a member of the workers' consumer group, which assigns it its
 *   partitions and stops the whole group at every join and death.
 * - `presence` (presence-reader.ts), once the worker hands over its store's membership
 *   ({@link KafkaRunQueue.shareRunQueue}): each member computes its partitions from the live
 *   workers and reads them outside any group; a change of members moves only the partitions that
 *   change hands. Without a membership (a producer, a worker without presence) the mode is `group`.
 *
 * The mode starts on the first fetch(), never at connect(): a producer that only enqueues must not
 * join the group and take partitions it will never read. A mode that fails to start is dropped, and
 * the next fetch starts one again.
 */
import type { Admin, Kafka } from 'kafkajs';
import type { Delivery, FetchOptions, RunQueueMembership } from '@baton/core/adapter';
import type { KafkaLogHook } from './client.js';
import { GroupConsumer } from './group-consumer.js';
import type { KafkaLayout } from './layout.js';
import type { ResolvedKafkaOptions } from './options.js';
import type { PartitionReader } from './partition-reader.js';
import { PresenceReader } from './presence-reader.js';
import type { OutgoingRecord } from './producer.js';
import { RunBuffer, type KafkaQueueStats } from './run-buffer.js';

/** The mode feeding the buffer, as the queue starts and stops it. */
type OwnershipMode = GroupConsumer | PresenceReader;

export class KafkaRunQueue {
  private readonly buffer: RunBuffer;
  private mode: OwnershipMode | undefined;
  private starting: Promise<void> | undefined;
  private membership: RunQueueMembership | undefined;
  /** Every member id handed over, in order (one per worker that shared this transport). */
  private readonly handedIds: string[] = [];

  constructor(
    private readonly kafka: Kafka,
    private readonly options: ResolvedKafkaOptions,
    layout: KafkaLayout,
    partitionCount: number,
    log: KafkaLogHook | undefined,
    /** Publishes a record (the transport's producer); passOn needs it. */
    send?: (record: OutgoingRecord) => Promise<unknown>,
    /** Reads committed offsets and watermarks where an owned partition starts. */
    private readonly admin?: Admin,
    /**
     * Commits owned partitions' positions: a connection without long polls (the journal's
     * reader), so a commit never waits behind one.
     */
    private readonly committer?: PartitionReader,
  ) {
    this.buffer = new RunBuffer(options, layout, partitionCount, log, send);
  }

  /**
   * The live workers, from the worker's store; with partitionOwnership 'presence' they, not a
   * consumer group, split the partitions. Only before the first fetch: later it changes nothing.
   */
  shareRunQueue(membership: RunQueueMembership): void {
    // The latest one counts, also once reading: a transport shared by several workers in turn
    // (one stops, the next starts) reads as the live one, never as a member the store has forgotten.
    // The earlier ones still count while the store lists them live: several workers of one
    // process on one transport read all their shares (partition-ownership.ts, invariant 5).
    this.membership = membership;
    if (!this.handedIds.includes(membership.memberId)) this.handedIds.push(membership.memberId);
  }

  /** What the queue holds right now, for metrics and tests. */
  stats(): KafkaQueueStats {
    return this.buffer.stats();
  }

  /** Partitions this process consumes right now (empty before the first fetch or mid-rebalance). */
  get localPartitions(): readonly number[] {
    return this.buffer.assigned;
  }

  async fetch(options: FetchOptions): Promise<Delivery[]> {
    this.start();
    return this.buffer.fetch(options);
  }

  async close(): Promise<void> {
    this.buffer.close();
    await this.starting?.catch(() => undefined);
    await this.mode?.stop();
    await this.buffer.commitsDone();
    await this.mode?.disconnect();
  }

  /** Starts the mode (see the module comment) unless one is started or starting. */
  private start(): void {
    if (this.starting !== undefined || this.buffer.closed) return;
    const mode = this.modeFor(this.membership);
    this.mode = mode;
    this.buffer.feed = mode;
    this.starting = mode.start();
    this.starting.catch(() => {
      // The mode logged and undid what it started; a later fetch tries again.
      if (this.mode === mode) {
        this.mode = undefined;
        this.buffer.feed = undefined;
        this.starting = undefined;
      }
    });
  }

  private modeFor(membership: RunQueueMembership | undefined): OwnershipMode {
    if (this.options.partitionOwnership === 'presence' && membership !== undefined) {
      return new PresenceReader(
        this.kafka,
        this.buffer,
        // Asked through the queue, so a later shareRunQueue takes effect at the next refresh.
        () => this.membership ?? membership,
        () => this.handedIds,
        this.admin,
        this.committer,
      );
    }
    return new GroupConsumer(this.kafka, this.buffer);
  }
}
