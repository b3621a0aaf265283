/**
 * The Kafka {@link Transport}: lifecycle, and the seams to the run queue, the journal and the
 * dead-letter queue, which live in their own files.
 *
 * Invariants:
 * 1. connect() runs once at a time; a second call while it runs shares its promise, one after it
 *    succeeded resolves at once, one after it failed tries again.
 * 2. close() is idempotent and final: from its first call every operation throws BATON_CLOSED,
 *    waiting fetches return empty, and the consumer leaves its group so the other members take its
 *    partitions at once.
 */
import { BatonError, PayloadTooLargeError } from '@baton/core';
import {
  AdapterLifecycle,
  DEFAULT_RUN_PRIORITY,
  PriorityLanes,
  assertRunId,
  deadLetterQueue,
  laneFor,
  laneLevels,
  type RunPriority,
  type BacklogDetail,
  type DeadLetter,
  type DeadLetterPage,
  type DeadLetterPurge,
  type DeadLetterQuery,
  type RedriveResult,
  type StoredDeadLetter,
  type Delivery,
  type EnqueueOptions,
  type FetchOptions,
  type JournalAppend,
  type JournalRecord,
  type RunQueueMembership,
  type Transport,
} from '@baton/core/adapter';
import type { Admin, Kafka } from 'kafkajs';
import { createKafkaClient, type KafkaLogHook } from './client.js';
import type { KafkaContext } from './context.js';
import { KafkaDeadLetters } from './dead-letter-admin.js';
import { withKafkaRetries } from './retry.js';
import { toKafkaError } from './errors.js';
import type { AppendRetryStats } from './append-retry.js';
import { KafkaGroupLog } from './group-log.js';
import { GroupReads, type GroupReadStats } from './group-reads.js';
import { appendJournalRecord, readJournal } from './journal.js';
import { consumerGroupLag, consumerGroupLagByPartition } from './backlog.js';
import { laneLayout, layoutFor, partitionForKey, type KafkaLayout } from './layout.js';
import { resolveKafkaOptions, type KafkaTransportOptions, type ResolvedKafkaOptions } from './options.js';
import { PartitionReader } from './partition-reader.js';
import { BatchingProducer } from './producer.js';
import { KafkaRunQueue, MSG_ID_HEADER, type KafkaQueueStats } from './run-queue.js';
import { ensureTopics } from './setup.js';
import { TailReads } from './tail-reads.js';

export interface KafkaTransportExtras {
  /**
   * Receives kafkajs's own warnings and errors (rebalances, reconnects), for the caller's logger.
   * @defaultValue none: kafkajs logs nothing; failures surface through the transport's operations
   */
  log?: KafkaLogHook;
}

/**
 * Creates a {@link Transport} on Kafka. Options are checked now (ConfigError naming the option);
 * nothing touches the network until connect().
 *
 * @example
 * const transport = kafkaTransport({ brokers: 'kafka://kafka:9092', prefix: 'baton' });
 * await transport.connect(); // creates baton.runs (.high, .low), baton.journal, baton.journal.groups and baton.dlq if missing
 */
export function kafkaTransport(options: KafkaTransportOptions & KafkaTransportExtras = {}): KafkaTransport {
  return new KafkaTransport(resolveKafkaOptions(options), options.log);
}

/** The Kafka transport: the {@link Transport} contract plus a view of its run queue. */
export class KafkaTransport implements Transport {
  readonly name = 'kafka';
  readonly supportsOptimisticAppend = false;
  readonly scansSharedLog = true;
  /** A run's records share partitions with other runs': they go with the topic's `retention.ms`. */
  readonly journalPurge = 'retention';

  /** created, connecting, open (topics in place, clients connected), closed (final). */
  private readonly lifecycle = new AdapterLifecycle<KafkaContext>({
    adapter: 'kafka transport',
    connectHint: 'await transport.connect() first',
    closedHint: 'create a new transport instead',
  });
  private readonly layout: KafkaLayout;
  /** Counters of the journal's lost-ack path (journal.ts). */
  private readonly appendStats: AppendRetryStats = { retried: 0, foundLanded: 0 };
  /** Counters of the group logs' coalesced reads (group-reads.ts), across connections. */
  private readonly groupReadStats: GroupReadStats = { reads: 0, ranges: 0, fetchedRecords: 0 };
  /**
   * Logs of group records for group commit across runs (group-log.ts): the topic
   * `<prefix>.journal.groups`, keyed by log name; a position is an offset + 1.
   */
  readonly groupLog: KafkaGroupLog = new KafkaGroupLog(
    (operation, retryReads, work) =>
      retryReads ? this.guardRead(operation, work) : this.guard(operation, work),
    this.groupReadStats,
    () => this.options.maxMessageBytes,
  );
  /** The dead-letter queue: core's administration over the DLQ topic (dead-letter-admin.ts). */
  private readonly deadLetters = deadLetterQueue(
    new KafkaDeadLetters((operation, retryReads, work) =>
      retryReads ? this.guardRead(operation, work) : this.guard(operation, work),
    ),
    (data, options) => this.enqueue(data, options),
  );
  private roundRobin = 0;
  private membership: RunQueueMembership | undefined;
  /**
   * The run queue's priority lanes. Each lane's queue takes from its own in-process buffer, so
   * asking an empty lane costs nothing and every fetch asks every lane.
   */
  private readonly lanes = new PriorityLanes({
    high: (options) => this.guard('fetch', (context) => laneQueue(context, 'high').fetch(options)),
    normal: (options) => this.guard('fetch', (context) => context.queue.fetch(options)),
    low: (options) => this.guard('fetch', (context) => laneQueue(context, 'low').fetch(options)),
  });

  /** @internal use {@link kafkaTransport} */
  constructor(
    private readonly options: ResolvedKafkaOptions,
    private readonly log: KafkaLogHook | undefined,
  ) {
    this.layout = layoutFor(options.prefix);
  }

  connect(): Promise<void> {
    return this.lifecycle.connect(
      () => this.setUp(),
      (context) => disconnect(context),
    );
  }

  private async setUp(): Promise<KafkaContext> {
    const kafka: Kafka = createKafkaClient(this.options, this.log);
    const admin: Admin = kafka.admin();
    const producer = new BatchingProducer(kafka, this.options.maxMessageBytes, this.options.requestTimeoutMs);
    const reader = new PartitionReader(kafka, [
      this.layout.journalTopic,
      this.layout.groupTopic,
      this.layout.dlqTopic,
    ]);
    try {
      await admin.connect();
      const topics = await withKafkaRetries(
        { brokers: this.options.displayBrokers, operation: 'connect: topics' },
        () => ensureTopics(admin, this.options, this.layout),
      );
      // Topics just created (a fresh cluster) may still be electing their leaders: the metadata
      // these connects read answers with a retriable error meanwhile, retried like the topics.
      await withKafkaRetries({ brokers: this.options.displayBrokers, operation: 'connect: clients' }, () =>
        Promise.all([producer.connect(), reader.connect()]),
      );
      // One queue per priority lane, each reading its own topic (docs/priorities.md).
      const queueOf = (priority: RunPriority): KafkaRunQueue => {
        const queue = new KafkaRunQueue(
          kafka,
          this.options,
          laneLayout(this.layout, this.layout.runLanes[priority]),
          topics.lanePartitions[priority],
          this.log,
          (r) => producer.send(r),
          admin,
          reader,
        );
        if (this.membership !== undefined) queue.shareRunQueue(this.membership);
        return queue;
      };
      const queues: KafkaContext['queues'] = {};
      for (const level of laneLevels(this.options.priorityLanes)) queues[level] = queueOf(level);
      const normal = queues[DEFAULT_RUN_PRIORITY]!;
      return {
        options: this.options,
        layout: this.layout,
        topics,
        admin,
        producer,
        reader,
        tails: new TailReads(reader, this.layout.journalTopic),
        groupReads: new GroupReads(reader, admin, this.layout.groupTopic, this.groupReadStats),
        queue: normal,
        queues,
      };
    } catch (err) {
      await Promise.allSettled([admin.disconnect(), producer.disconnect(), reader.disconnect()]);
      throw toKafkaError(err, { brokers: this.options.displayBrokers, operation: 'connect' });
    }
  }

  close(): Promise<void> {
    // Waiting fetches end now (invariant 2).
    this.lanes.close();
    return this.lifecycle.close(async (context) => {
      if (context !== undefined) await disconnect(context);
    });
  }

  private open(operation: string): KafkaContext {
    return this.lifecycle.open(operation);
  }

  private async guard<T>(operation: string, work: (context: KafkaContext) => Promise<T>): Promise<T> {
    const context = this.open(operation);
    try {
      return await work(context);
    } catch (err) {
      if (this.lifecycle.state === 'closed' && !(err instanceof BatonError))
        throw this.lifecycle.closedError(operation);
      throw toKafkaError(err, { brokers: this.options.displayBrokers, operation });
    }
  }

  /** {@link guard} for a read or an admin call: retriable broker errors are retried (retry.ts). */
  private guardRead<T>(operation: string, work: (context: KafkaContext) => Promise<T>): Promise<T> {
    return this.guard(operation, (context) =>
      withKafkaRetries({ brokers: this.options.displayBrokers, operation }, () => work(context)),
    );
  }

  // ------------------------------------------------------------------------------------------

  enqueue(data: Uint8Array, options: EnqueueOptions = {}): Promise<void> {
    return this.guard('enqueue', async (context) => {
      if (data.byteLength > this.options.maxMessageBytes) {
        throw new PayloadTooLargeError('run message', data.byteLength, this.options.maxMessageBytes);
      }
      const priority = laneFor(
        options.priority,
        this.options.priorityLanes,
        'kafka transport: enqueue',
        'priorityLanes (BATON_KAFKA_PRIORITY_LANES=true)',
      );
      const headers: Record<string, string> = { ...options.headers };
      if (options.msgId !== undefined) headers[MSG_ID_HEADER] = options.msgId;
      await context.producer.send({
        topic: this.layout.runLanes[priority].topic,
        partition: this.partitionFor(context, options, priority),
        key: options.key ?? null,
        value: Buffer.from(data),
        headers,
      });
    });
  }

  /**
   * The store's live workers, handed over by the worker before its first fetch: with
   * `partitionOwnership: 'presence'` (the default) they split the runs topic's partitions, and no
   * consumer group is joined (run-queue.ts, partition-ownership.ts).
   */
  shareRunQueue(membership: RunQueueMembership): void {
    this.membership = membership;
    const queues = this.lifecycle.peek()?.queues;
    if (queues !== undefined) for (const queue of Object.values(queues)) queue?.shareRunQueue(membership);
  }

  /** The `normal` lane's run queue state in this process (zeros before connect()). */
  queueStats(): KafkaQueueStats {
    return (
      this.lifecycle.peek()?.queue.stats() ?? {
        buffered: 0,
        pendingOffsets: 0,
        paused: false,
        generation: 0,
        assignedPartitions: [],
      }
    );
  }

  private partitionFor(context: KafkaContext, options: EnqueueOptions, priority: RunPriority): number {
    const count = context.topics.lanePartitions[priority];
    if (options.local) {
      const mine = laneQueue(context, priority).localPartitions;
      if (mine.length > 0) {
        const keyed = options.key === undefined ? -1 : partitionForKey(options.key, count);
        return mine.includes(keyed) ? keyed : mine[this.roundRobin++ % mine.length]!;
      }
    }
    // Same key, same partition: ordered. Copies of one msgId also share a partition, so the
    // first one enqueued is the one delivered and its copies are dropped.
    const key = options.key ?? options.msgId;
    if (key !== undefined) return partitionForKey(key, count);
    return this.roundRobin++ % count;
  }

  /** The workers' consumer-group lag on the run lanes' topics (backlog.ts says what it counts). */
  async backlog(timeoutMs: number): Promise<number | undefined> {
    const context = this.lifecycle.peek();
    if (context === undefined || this.lifecycle.state === 'closed') return undefined;
    return consumerGroupLag(context, timeoutMs);
  }

  /** The same lag per partition of the lanes' topics (backlog.ts); no `ackPending` on Kafka. */
  async backlogDetail(timeoutMs: number): Promise<BacklogDetail | undefined> {
    const context = this.lifecycle.peek();
    if (context === undefined || this.lifecycle.state === 'closed') return undefined;
    return consumerGroupLagByPartition(context, timeoutMs);
  }

  /**
   * Takes from the priority lanes by the claim cycle (priority-lanes.ts), or, without
   * `priorityLanes`, from the runs topic alone as before priorities.
   */
  fetch(options: FetchOptions): Promise<Delivery[]> {
    if (!this.options.priorityLanes) return this.guard('fetch', (context) => context.queue.fetch(options));
    this.open('fetch');
    return this.lanes.fetch(options);
  }

  append(append: JournalAppend): Promise<number> {
    return this.guard('append', (context) => appendJournalRecord(context, append, this.appendStats));
  }

  read(runId: string, afterPosition: number, uptoPosition?: number): Promise<JournalRecord[]> {
    return this.guardRead('read', (context) => readJournal(context, runId, afterPosition, uptoPosition));
  }

  /**
   * A documented no-op: a run's journal records share partitions with other runs', and Kafka
   * deletes only whole segments by age, so they stay until the journal topic's `retention.ms`
   * (option `journalRetentionMs`, docs/retention.md). See {@link journalPurge}.
   */
  purgeJournal(runId: string): Promise<void> {
    return this.guard('purgeJournal', async () => {
      assertRunId(runId);
    });
  }

  deadLetter(letter: DeadLetter): Promise<void> {
    return this.deadLetters.deadLetter(letter);
  }

  listDeadLetters(limit?: number): Promise<DeadLetter[]> {
    return this.opened('listDeadLetters', () => this.deadLetters.listDeadLetters(limit));
  }

  pageDeadLetters(query?: DeadLetterQuery): Promise<DeadLetterPage> {
    return this.opened('pageDeadLetters', () => this.deadLetters.pageDeadLetters(query));
  }

  getDeadLetter(id: string): Promise<StoredDeadLetter | undefined> {
    return this.opened('getDeadLetter', () => this.deadLetters.getDeadLetter(id));
  }

  /**
   * Re-enqueues the letter's original data and headers without a key (the letter does not keep
   * the original's), so the message lands on any partition; then appends the removal marker.
   */
  redriveDeadLetter(id: string): Promise<RedriveResult> {
    return this.opened('redriveDeadLetter', () => this.deadLetters.redriveDeadLetter(id));
  }

  purgeDeadLetters(purge: DeadLetterPurge): Promise<number> {
    return this.opened('purgeDeadLetters', () => this.deadLetters.purgeDeadLetters(purge));
  }

  /** `work`, once the transport is open: BATON_CLOSED / BATON_NOT_CONNECTED come first. */
  private async opened<T>(operation: string, work: () => Promise<T>): Promise<T> {
    this.open(operation);
    return work();
  }
}

/** The queue of a lane in use (enqueue and fetch reach a lane only when `priorityLanes` is on). */
function laneQueue(context: KafkaContext, level: RunPriority): KafkaRunQueue {
  const queue = context.queues[level];
  if (queue === undefined) throw new Error(`kafka transport: the ${level} lane is not in use`);
  return queue;
}

/** Leaves the consumer groups, then disconnects the clients. */
async function disconnect(context: KafkaContext): Promise<void> {
  await Promise.all(Object.values(context.queues).map((queue) => queue?.close()));
  await Promise.allSettled([
    context.producer.disconnect(),
    context.reader.disconnect(),
    context.admin.disconnect(),
  ]);
}
