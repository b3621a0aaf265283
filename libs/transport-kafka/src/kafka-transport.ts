/**
 * The Kafka {@link Transport}: lifecycle, and the composition of its capabilities, which live in
 * their own files: the run queue (run-lanes.ts over run-queue.ts), the journal (journal.ts), the
 * dead letters (dead-letter-admin.ts, under core's administration) and the group logs
 * (group-log.ts).
 *
 * Invariants:
 * 1. connect() runs once at a time; a second call while it runs shares its promise, one after it
 *    succeeded resolves at once, one after it failed tries again.
 * 2. close() is idempotent and final: from its first call every operation throws BATON_CLOSED,
 *    waiting fetches return empty, and the consumer leaves its group so the other members take its
 *    partitions at once.
 */
import { BatonError } from '@baton/core';
import {
  AdapterLifecycle,
  DEFAULT_RUN_PRIORITY,
  checkedJournal,
  deadLetterQueue,
  runStreamsOverJournal,
  laneLevels,
  type DeadLetterQueue,
  type JournalLog,
  type RunPriority,
  type RunQueue,
  type RunStreamLog,
  type Transport,
} from '@baton/core/adapter';
import type { Admin, Kafka } from 'kafkajs';
import { createKafkaClient, type KafkaLogHook } from './client.js';
import type { KafkaContext, KafkaGuard } from './context.js';
import { KafkaDeadLetters } from './dead-letter-admin.js';
import { withKafkaRetries } from './retry.js';
import { toKafkaError } from './errors.js';
import type { AppendRetryStats } from './append-retry.js';
import { KafkaGroupLog } from './group-log.js';
import { GroupReads, type GroupReadStats } from './group-reads.js';
import { kafkaJournal, streamStartHint } from './journal.js';
import { laneLayout, layoutFor, type KafkaLayout } from './layout.js';
import { resolveKafkaOptions, type KafkaTransportOptions, type ResolvedKafkaOptions } from './options.js';
import { PartitionReader } from './partition-reader.js';
import { BatchingProducer } from './producer.js';
import { KafkaRunLanes } from './run-lanes.js';
import type { KafkaQueueStats } from './run-buffer.js';
import { KafkaRunQueue } from './run-queue.js';
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
export function kafkaTransport(options: KafkaTransportOptions & KafkaTransportExtras = {}): Transport {
  return createKafkaTransport(options);
}

/**
 * {@link kafkaTransport} with the class's view of its run queue ({@link KafkaTransport.queueStats})
 * and its group log's counters: for this package's own specs, not on its door.
 */
export function createKafkaTransport(
  options: KafkaTransportOptions & KafkaTransportExtras = {},
): KafkaTransport {
  return new KafkaTransport(resolveKafkaOptions(options), options.log);
}

/** The Kafka transport: the {@link Transport} contract plus a view of its run queue (for specs). */
export class KafkaTransport implements Transport {
  readonly name = 'kafka';
  /** The run queue, with every optional member: the backlog, and the store's membership (`share`). */
  readonly runQueue: Required<RunQueue>;
  readonly journal: JournalLog;
  readonly runStreams: RunStreamLog;
  readonly deadLetters: DeadLetterQueue;
  /**
   * Logs of group records for group commit across runs (group-log.ts): the topic
   * `<prefix>.journal.groups`, keyed by log name; a position is an offset + 1.
   */
  readonly groupLog: KafkaGroupLog;

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
  private readonly lanes: KafkaRunLanes;

  /** @internal use {@link kafkaTransport}, or {@link createKafkaTransport} in specs */
  constructor(
    private readonly options: ResolvedKafkaOptions,
    private readonly log: KafkaLogHook | undefined,
  ) {
    this.layout = layoutFor(options.prefix);
    // Each operation is checked for close() once (lifecycle.ts, invariant 5): the run queue's and the
    // journal's by their capability's guard on entry, after which `entered` runs their work without
    // another check; `guard` checks for work after an await (a lane's fetch, the dead-letter shelf
    // under core's administration) and for the group log, which has no guard.
    const guard: KafkaGuard = (operation, retryReads, work) => this.run(operation, retryReads, work, 'open');
    const entered: KafkaGuard = (operation, retryReads, work) =>
      this.run(operation, retryReads, work, 'connected');
    this.lanes = new KafkaRunLanes(
      options,
      entered,
      guard,
      () => this.lifecycle.peek(),
      () => this.lifecycle.state === 'closed',
    );
    // The backlog answers undefined on a closed transport, and a membership is only stored.
    this.runQueue = this.lifecycle.guard('runQueue', this.lanes, ['backlog', 'backlogDetail', 'share']);
    this.journal = this.lifecycle.guard(
      'journal',
      checkedJournal(kafkaJournal(entered, this.appendStats), 'kafka transport'),
    );
    // Records of the journal topic keyed `<runId>.s.<stream>` (core's run-stream-log.ts); a read
    // from the start begins near the run's start time (journal.ts, streamStartHint).
    this.runStreams = this.lifecycle.guard(
      'runStreams',
      runStreamsOverJournal(kafkaJournal(entered, this.appendStats), streamStartHint(entered)),
    );
    this.deadLetters = this.lifecycle.guard(
      'deadLetters',
      deadLetterQueue(new KafkaDeadLetters(guard), (data, enqueue) => this.runQueue.enqueue(data, enqueue)),
    );
    this.groupLog = new KafkaGroupLog(
      (operation, retryReads, work) => guard(operation, retryReads, work),
      this.groupReadStats,
      () => this.options.maxMessageBytes,
    );
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
        const membership = this.lanes.sharedMembership;
        if (membership !== undefined) queue.shareRunQueue(membership);
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

  /**
   * Runs `work` on the open context under `operation` (a {@link KafkaGuard}): `reach` is the
   * lifecycle's `open` (closed check) or `connected` (none: the capability's guard just made it).
   * With `retryReads`, retriable broker errors are retried (retry.ts), for a read or an admin call.
   * A failure once closed is BATON_CLOSED: the check after the await, which no guard covers.
   */
  private async run<T>(
    operation: string,
    retryReads: boolean,
    work: (context: KafkaContext) => Promise<T>,
    reach: 'open' | 'connected',
  ): Promise<T> {
    const context = reach === 'open' ? this.lifecycle.open(operation) : this.lifecycle.connected(operation);
    const brokers = this.options.displayBrokers;
    try {
      return await (retryReads
        ? withKafkaRetries({ brokers, operation }, () => work(context))
        : work(context));
    } catch (err) {
      if (this.lifecycle.state === 'closed' && !(err instanceof BatonError))
        throw this.lifecycle.closedError(operation);
      throw toKafkaError(err, { brokers, operation });
    }
  }

  /** The `normal` lane's run queue state in this process (zeros before connect()). */
  queueStats(): KafkaQueueStats {
    return this.lanes.stats();
  }
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
