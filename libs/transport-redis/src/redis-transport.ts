/**
 * The Redis {@link Transport}: lifecycle, and the composition of its capabilities, which live in
 * their own files: the run queue (BullMQ, run-queue.ts), the journal and group logs (Redis
 * Streams, journal.ts, group-log.ts) and the dead letters (dead-letter-admin.ts, under core's
 * administration).
 *
 * Invariants:
 * 1. connect() runs once at a time (AdapterLifecycle): the command connection is opened and the
 *    server checked first, so a wrong URL or password fails there, naming it; then BullMQ's queue
 *    and worker are made and the worker's stalled-job check started.
 * 2. close() is idempotent and final: from its first call every operation throws BATON_CLOSED,
 *    waiting fetches return what they have, jobs taken while closing are handed back, and every
 *    step of tear-down is bounded, so close() ends while Redis is down too.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  AdapterLifecycle,
  DEFAULT_RUN_PRIORITY,
  deadLetterQueue,
  journalOnContext,
  runStreamsOnContext,
  type RunStreamLog,
  shelfOnContext,
  laneLevels,
  type DeadLetterQueue,
  type GroupLog,
  type JournalLog,
  type RunPriority,
  type RunQueue,
  type Transport,
} from '@baton/core/adapter';
import {
  openBullConnection,
  openCommandConnection,
  withTimeout,
  type CommandConnection,
} from './connection.js';
import type { RunLane, TransportContext } from './context.js';
import { redisDeadLetters } from './dead-letter-admin.js';
import { toRedisTransportError } from './errors.js';
import { RedisGroupLog } from './group-log.js';
import { redisJournal } from './journal.js';
import { layoutFor, type RedisLayout, type RunLaneLayout } from './layout.js';
import { LaneWorker } from './lane-worker.js';
import { bullBatchSources, defineBullBatchScripts } from './bull-batch.js';
import { MarkerWatch } from './marker-watch.js';
import {
  resolveRedisTransportOptions,
  type RedisTransportOptions,
  type ResolvedRedisTransportOptions,
} from './options.js';
import { RedisRunQueue } from './run-queue.js';
import { confirmReplicated } from './replication.js';
import { defineScripts } from './scripts.js';

/** How long close() lets late jobs be handed back, and each connection close, before it drops them. */
const CLOSE_STEP_TIMEOUT_MS = 2_000;
/**
 * BullMQ's maxStalledCount: how often a job may go back from a stall before BullMQ fails it. In
 * practice never (run-queue.ts, invariant 2); the worker's maxDeliveries is the bound.
 */
const UNBOUNDED_STALLS = Number.MAX_SAFE_INTEGER;

/**
 * Creates a {@link Transport} on Redis. Options are checked now (ConfigError naming the option);
 * nothing touches the network until connect().
 *
 * @example
 * const transport = redisTransport({ url: 'redis://redis:6379', prefix: 'baton-bus' });
 * await transport.connect();
 */
export function redisTransport(options: RedisTransportOptions = {}): Transport {
  return new RedisTransport(resolveRedisTransportOptions(options));
}

/** The longest one BZPOPMIN of the marker watch blocks. */
const MARKER_BLOCK_MS = 1_000;

interface OpenTransport {
  context: TransportContext;
  redis: Redis;
  connection: CommandConnection;
  /** The run queue's lanes in use (context.lanes), each closed on tear-down. */
  lanes: RunLane[];
  /** `held` until tear-down: while it is, a BullMQ connection that ends is connected again. */
  state: { held: boolean };
}

class RedisTransport implements Transport {
  readonly name = 'redis';
  readonly runQueue: RunQueue;
  readonly journal: JournalLog;
  readonly runStreams: RunStreamLog;
  readonly deadLetters: DeadLetterQueue;
  readonly groupLog: GroupLog;

  /** created, connecting, open (connection, queue and worker in place), closed (final). */
  private readonly lifecycle = new AdapterLifecycle<OpenTransport>({
    adapter: 'redis transport',
    connectHint: 'await transport.connect() first',
    closedHint: 'create a new transport instead',
  });
  private readonly closeController = new AbortController();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly layout: RedisLayout;
  private readonly queue: RedisRunQueue;

  constructor(private readonly options: ResolvedRedisTransportOptions) {
    this.layout = layoutFor(options.prefix);
    // Each operation is checked for close() once (lifecycle.ts, invariant 5): by the capability's
    // guard on entry, after which `connected` hands out the context, or by `open` for work after
    // an await and for the group log, which has no guard.
    const open = (operation: string): TransportContext => this.lifecycle.open(operation).context;
    const connected = (operation: string): TransportContext => this.lifecycle.connected(operation).context;
    this.queue = new RedisRunQueue(
      connected,
      open,
      () => this.lifecycle.peek()?.context,
      options.priorityLanes,
    );
    // The backlog answers undefined on a closed transport, rather than rejecting.
    this.runQueue = this.lifecycle.guard('runQueue', this.queue, ['backlog', 'backlogDetail']);
    this.journal = this.lifecycle.guard(
      'journal',
      journalOnContext(connected, redisJournal, 'redis transport'),
    );
    // Streams `<prefix>:journal:<runId>.s.<stream>` beside the runs' journals (core's run-stream-log.ts).
    this.runStreams = this.lifecycle.guard('runStreams', runStreamsOnContext(connected, redisJournal));
    this.deadLetters = this.lifecycle.guard(
      'deadLetters',
      deadLetterQueue(shelfOnContext(open, redisDeadLetters), (data, enqueue) =>
        this.runQueue.enqueue(data, enqueue),
      ),
    );
    this.groupLog = new RedisGroupLog(open);
  }

  connect(): Promise<void> {
    return this.lifecycle.connect(
      () => this.setUp(),
      (open) => this.tearDown(open),
    );
  }

  private async setUp(): Promise<OpenTransport> {
    // Before any connection: a BullMQ whose scripts the batch take and ack cannot drive is refused.
    bullBatchSources();
    const connection = await openCommandConnection(this.options);
    const redis = connection.redis;
    const lanes: Partial<Record<RunPriority, RunLane>> = {};
    const state = { held: true };
    for (const level of laneLevels(this.options.priorityLanes)) {
      lanes[level] = this.laneOn(redis, this.layout.runLanes[level], () => state.held);
    }
    const all = Object.values(lanes);
    const open: OpenTransport = {
      context: this.contextFor(connection, lanes),
      redis,
      connection,
      lanes: all,
      state,
    };
    try {
      await withTimeout(
        Promise.all(all.flatMap((lane) => [lane.queue.waitUntilReady(), lane.worker.waitUntilReady()])),
        this.options.connectTimeoutMs,
        {
          url: this.options.displayUrl,
          operation: 'connect (BullMQ queue and worker)',
        },
      );
      // The stalled check redelivers what a crashed consumer took and never acked (invariant 1
      // of run-queue.ts); it runs until the worker closes.
      for (const lane of all) void lane.worker.startStalledCheckTimer().catch(() => undefined);
      return open;
    } catch (err) {
      await this.tearDown(open);
      throw toRedisTransportError(err, { url: this.options.displayUrl, operation: 'connect' });
    }
  }

  /** One lane's BullMQ queue, its manual worker and its marker watch. */
  private laneOn(redis: Redis, layout: RunLaneLayout, held: () => boolean): RunLane {
    const connections = [openBullConnection(this.options, held), openBullConnection(this.options, held)];
    const queue = new Queue(layout.queueName, { connection: connections[0]!, prefix: this.layout.prefix });
    const worker = new LaneWorker(layout.queueName, null, {
      connection: connections[1]!,
      prefix: this.layout.prefix,
      autorun: false,
      lockDuration: this.options.ackWaitMs,
      skipLockRenewal: true,
      stalledInterval: this.options.stalledIntervalMs,
      maxStalledCount: UNBOUNDED_STALLS,
      removeOnComplete: { count: 0 },
    });
    // BullMQ emits 'error' for every failed background call (a reconnect, a stalled check while
    // Redis is down); an EventEmitter without a listener would throw it. The operations that
    // matter report their own errors.
    queue.on('error', () => undefined);
    worker.on('error', () => undefined);
    const markers = new MarkerWatch(redis, layout.queueMarker, MARKER_BLOCK_MS);
    return {
      queue,
      worker,
      batches: defineBullBatchScripts(connections[1]!),
      markers,
      connections,
      name: `${this.layout.prefix}:${layout.queueName}`,
    };
  }

  close(): Promise<void> {
    this.queue.close();
    this.closeController.abort();
    return this.lifecycle.close(async (open) => {
      if (open !== undefined) await this.tearDown(open);
    });
  }

  private async tearDown(open: OpenTransport): Promise<void> {
    const bounded = (work: Promise<unknown>) =>
      withTimeout(work, CLOSE_STEP_TIMEOUT_MS, { url: this.options.displayUrl, operation: 'close' }).catch(
        () => undefined,
      );
    open.state.held = false;
    for (const lane of open.lanes) lane.markers.close();
    await bounded(Promise.allSettled([...this.pending]));
    await Promise.all(
      open.lanes.flatMap((lane) => [bounded(lane.worker.close(true)), bounded(lane.queue.close())]),
    );
    await Promise.all(
      open.lanes.flatMap((lane) => [bounded(lane.worker.disconnect()), bounded(lane.queue.disconnect())]),
    );
    // BullMQ leaves the connections it was handed open (connection.ts, invariant 2).
    await Promise.all(open.lanes.flatMap((lane) => lane.connections.map((redis) => bounded(redis.quit()))));
    for (const redis of open.lanes.flatMap((lane) => lane.connections)) redis.disconnect();
    await open.connection.close(CLOSE_STEP_TIMEOUT_MS);
  }

  private contextFor(
    connection: CommandConnection,
    lanes: Partial<Record<RunPriority, RunLane>>,
  ): TransportContext {
    const options = this.options;
    const redis = connection.redis;
    const toError = (operation: string, err: unknown) =>
      toRedisTransportError(err, { url: options.displayUrl, operation });
    const call = async <T>(operation: string, work: () => Promise<T>): Promise<T> => {
      try {
        return await withTimeout(work(), options.requestTimeoutMs, { url: options.displayUrl, operation });
      } catch (err) {
        throw toError(operation, err);
      }
    };
    return {
      redis,
      connection,
      scripts: defineScripts(redis),
      lanes,
      normal: lanes[DEFAULT_RUN_PRIORITY]!,
      options,
      layout: this.layout,
      closing: this.closeController.signal,
      toError,
      call,
      writeReplicated: (operation, write) =>
        call(operation, async () => {
          const written = connection.generation();
          const result = await write();
          await confirmReplicated(connection, options, operation, written);
          return result;
        }),
      track: (work) => {
        this.pending.add(work);
        void work.finally(() => this.pending.delete(work)).catch(() => undefined);
      },
    };
  }
}
