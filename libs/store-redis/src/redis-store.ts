/**
 * The Redis {@link Store}: lifecycle and error mapping here; the work is in leases.ts, waits.ts,
 * runs.ts, presence.ts and the Lua scripts they call.
 *
 * Invariants:
 * 1. Every state change is one Lua script, so it is atomic on the server, and every time
 *    comparison inside it uses the server's TIME, never a worker's clock.
 * 2. No command is resent after a dropped connection (connection.ts): an operation either
 *    reports its outcome or fails with a BackendUnavailableError; it never runs twice silently.
 * 3. After close() every operation fails with BATON_CLOSED, including those in flight.
 * 4. close() does not wait for a connect under way: it closes that connection at once, so the
 *    connect fails with BATON_CLOSED instead of running on to its timeout.
 * 5. The data marker is checked at connect and after every reconnect until close()
 *    (data-marker.ts).
 * 6. With waitReplicas > 0, an operation that moves a run reports success only once that many
 *    replicas confirmed it (replication.ts).
 */
import type {
  JournalIndex,
  AcquireResult,
  CancelRequestResult,
  CreatedAndLeased,
  NewRunToLease,
  Checkpoint,
  CheckpointSummary,
  DueTimer,
  InboxSignal,
  LeaseInfo,
  PauseHeldResult,
  PauseRequestResult,
  ResumeResult,
  NewRun,
  ReportedWorker,
  RunCounts,
  RunPage,
  RunQuery,
  RenewRequest,
  RenewResult,
  ReopenResult,
  RunOutcome,
  RunRecord,
  RunTombstone,
  PresenceStore,
  Store,
  StoreDataLoss,
  RecordedDataLoss,
  SuspendRequest,
  SuspendResult,
  WorkerReport,
  PublishedMembership,
  ScanTurn,
  NewSchedule,
  SchedulePage,
  ScheduleQuery,
  ScheduleRecord,
  RateLimitAnswer,
  RateLimitRequest,
  SlotAnswer,
  SlotRequest,
  SlotState,
  ScheduleWrite,
} from '@baton/core/adapter';
import { AdapterLifecycle } from '@baton/core/adapter';
import { CancelWatch } from './cancel-watch.js';
import { createConnection, type StoreConnection } from './connection.js';
import { DataMarker } from './data-marker.js';
import type { StoreContext } from './context.js';
import { toStoreError } from './errors.js';
import { keyLayout, type KeyLayout } from './keys.js';
import * as fleet from './fleet.js';
import * as journalIndex from './journal-index.js';
import * as leases from './leases.js';
import {
  resolveRedisStoreOptions,
  type RedisStoreOptions,
  type ResolvedRedisStoreOptions,
} from './options.js';
import * as payloads from './payloads.js';
import * as pause from './pause.js';
import { PresenceRegistry } from './presence.js';
import * as queries from './queries.js';
import { confirmReplicated, REPLICATED_OPERATIONS } from './replication.js';
import * as retention from './retention.js';
import * as runs from './runs.js';
import * as schedules from './schedules.js';
import * as concurrency from './concurrency.js';
import * as rateLimits from './rate-limits.js';
import { checkEvalsha, defineScripts, loadScripts } from './scripts.js';
import * as waits from './waits.js';

/**
 * Creates a {@link Store} on one Redis primary (not Redis Cluster: keys carry no hash tags), named
 * directly (`redis://`) or found through Redis Sentinel (`redis+sentinel://`).
 * Options are validated at once: a malformed URL or option throws ConfigError here. Operations
 * called before connect() connect first. It has worker presence (optional in the contract),
 * bound to a named client connection.
 *
 * @example
 * const store = redisStore({ url: 'redis://127.0.0.1:6379', keyPrefix: 'baton:' });
 * await store.connect();
 * const lease = await store.acquireLease('run-1', 'worker-a', 5_000);
 */
export function redisStore(options: RedisStoreOptions = {}): Store & PresenceStore & RunReindexing {
  return new RedisStore(resolveRedisStoreOptions(options));
}

/** The Redis store's one-off migration of the query indexes (queries.ts, README "Run queries"). */
export interface RunReindexing {
  /**
   * Indexes for listRuns and countRuns every run written before the indexes existed (connect
   * does this once per data set by itself). Idempotent and safe while workers run; returns how
   * many runs it indexed.
   */
  reindexRuns(): Promise<number>;
}

/** What an open store holds: its connection and the context the capability modules run in. */
interface Opened {
  connection: StoreConnection;
  ctx: StoreContext;
}

class RedisStore implements Store, PresenceStore, RunReindexing {
  readonly name = 'redis';
  readonly payloadLocation = 'redis';

  /**
   * - `created`: nothing connected yet;
   * - `connecting`: connect() (or a first operation) is opening the connection;
   * - `open`: connected (ioredis reconnects by itself after a drop);
   * - `closed`: close() was called; every operation fails with BATON_CLOSED.
   */
  private readonly lifecycle = new AdapterLifecycle<Opened>({
    adapter: 'redis store',
    connectHint: 'await store.connect() first',
    closedHint: 'create a new store',
  });
  /** The connection a connect under way is opening, for close() to cut short (invariant 4). */
  private opening: StoreConnection | undefined;
  private readonly keys: KeyLayout;
  private readonly presence: PresenceRegistry;
  private readonly cancels: CancelWatch;
  /** Tells a Redis that lost the data from one that only restarted or failed over (data-marker.ts). */
  private readonly marker = new DataMarker();

  constructor(private readonly options: ResolvedRedisStoreOptions) {
    this.keys = keyLayout(options.keyPrefix);
    this.presence = new PresenceRegistry(options, this.keys);
    this.cancels = new CancelWatch(options, this.keys);
  }

  connect(): Promise<void> {
    return this.lifecycle.connect(
      () => this.setUp(),
      (opened) => opened.connection.close(),
    );
  }

  close(): Promise<void> {
    const cutShort = this.opening?.close();
    return this.lifecycle.close(async (opened) => {
      // All run even when one fails; a close that fails still leaves the store closed.
      await Promise.allSettled([
        cutShort,
        this.presence.close(),
        this.cancels.close(),
        opened?.connection.close(),
      ]);
    });
  }

  onDataLoss(listener: (loss: StoreDataLoss) => void): void {
    this.marker.onLoss(listener);
  }

  lastDataLoss(): Promise<RecordedDataLoss | undefined> {
    return this.op('lastDataLoss', (ctx) => this.marker.last(ctx));
  }

  // LeaseStore
  acquireLease(runId: string, owner: string, ttlMs: number): Promise<AcquireResult> {
    return this.op('acquireLease', (ctx) => leases.acquireLease(ctx, runId, owner, ttlMs));
  }
  renewLeases(requests: readonly RenewRequest[], ttlMs: number): Promise<RenewResult[]> {
    return this.op('renewLeases', (ctx) => leases.renewLeases(ctx, requests, ttlMs));
  }
  releaseLease(runId: string, epoch: number): Promise<boolean> {
    return this.op('releaseLease', (ctx) => leases.releaseLease(ctx, runId, epoch));
  }
  suspendRun(request: SuspendRequest): Promise<SuspendResult> {
    return this.op('suspendRun', (ctx) => waits.suspendRun(ctx, request));
  }
  reapExpiredLeases(limit: number, reclaimAfterMs: number): Promise<string[]> {
    return this.op('reapExpiredLeases', (ctx) => leases.reapExpiredLeases(ctx, limit, reclaimAfterMs));
  }
  requestCancel(runId: string, reason?: string): Promise<CancelRequestResult> {
    return this.op('requestCancel', (ctx) => waits.requestCancel(ctx, runId, reason));
  }
  closeCancels(runId: string, epoch: number): Promise<{ cancelRequested: boolean; cancelReason?: string }> {
    return this.op('closeCancels', (ctx) => waits.closeCancels(ctx, runId, epoch));
  }
  watchCancels(workerId: string, listener: (runId: string) => void): () => void {
    return this.cancels.watch(workerId, listener);
  }
  requestPause(runId: string, reason?: string): Promise<PauseRequestResult> {
    return this.op('requestPause', (ctx) => pause.requestPause(ctx, runId, reason));
  }
  pauseHeldRun(runId: string, epoch: number): Promise<PauseHeldResult> {
    return this.op('pauseHeldRun', (ctx) => pause.pauseHeldRun(ctx, runId, epoch));
  }
  resumeRun(runId: string): Promise<ResumeResult> {
    return this.op('resumeRun', (ctx) => pause.resumeRun(ctx, runId));
  }
  getLease(runId: string): Promise<LeaseInfo | undefined> {
    return this.op('getLease', (ctx) => leases.getLease(ctx, runId));
  }
  now(): Promise<number> {
    return this.op('now', (ctx) => leases.now(ctx));
  }
  recordClaimFailure(runId: string, epoch: number): Promise<number> {
    return this.op('recordClaimFailure', (ctx) => leases.recordClaimFailure(ctx, runId, epoch));
  }

  // CheckpointStore
  writeCheckpoint(checkpoint: Checkpoint): Promise<void> {
    return this.op('writeCheckpoint', (ctx) => runs.writeCheckpoint(ctx, checkpoint));
  }
  loadCheckpoint(runId: string, seq?: number): Promise<Checkpoint | undefined> {
    return this.op('loadCheckpoint', (ctx) => runs.loadCheckpoint(ctx, runId, seq));
  }
  listCheckpoints(runId: string): Promise<CheckpointSummary[]> {
    return this.op('listCheckpoints', (ctx) => runs.listCheckpoints(ctx, runId));
  }

  // RunIndex
  createRun(run: NewRun): Promise<{ created: boolean; run: RunRecord }> {
    return this.op('createRun', (ctx) => runs.createRun(ctx, run));
  }
  createRunAndLease(run: NewRunToLease, owner: string, ttlMs: number): Promise<CreatedAndLeased> {
    return this.op('createRunAndLease', (ctx) => runs.createRunAndLease(ctx, run, owner, ttlMs));
  }
  getRun(runId: string): Promise<RunRecord | undefined> {
    return this.op('getRun', (ctx) => runs.getRun(ctx, runId));
  }
  finishRun(runId: string, epoch: number, outcome: RunOutcome, checkpoint?: Checkpoint): Promise<void> {
    return this.op('finishRun', (ctx) => runs.finishRun(ctx, runId, epoch, outcome, checkpoint));
  }
  reopenRun(runId: string, checkpoint: Checkpoint): Promise<ReopenResult> {
    return this.op('reopenRun', (ctx) => runs.reopenRun(ctx, runId, checkpoint));
  }

  // TimerStore and SignalInbox
  claimDueTimers(limit: number, redeliverAfterMs: number): Promise<DueTimer[]> {
    return this.op('claimDueTimers', (ctx) => waits.claimDueTimers(ctx, limit, redeliverAfterMs));
  }
  deliverSignal(
    runId: string,
    signal: Omit<InboxSignal, 'receivedAt'>,
  ): Promise<{ found: boolean; wake: boolean; dropped?: boolean }> {
    return this.op('deliverSignal', (ctx) => waits.deliverSignal(ctx, runId, signal));
  }
  readSignals(runId: string): Promise<InboxSignal[]> {
    return this.op('readSignals', (ctx) => waits.readSignals(ctx, runId));
  }

  // RetentionStore
  expiredRuns(olderThanMs: number, limit: number): Promise<string[]> {
    return this.op('expiredRuns', (ctx) => retention.expiredRuns(ctx, olderThanMs, limit));
  }
  deleteRun(runId: string): Promise<boolean> {
    return this.op('deleteRun', (ctx) => retention.deleteRun(ctx, runId));
  }
  deleteExpiredRuns(olderThanMs: number, limit: number, tombstoneMs: number): Promise<string[]> {
    return this.op('deleteExpiredRuns', (ctx) =>
      retention.deleteExpiredRuns(ctx, olderThanMs, limit, tombstoneMs),
    );
  }
  runTombstone(runId: string): Promise<RunTombstone | undefined> {
    return this.op('runTombstone', (ctx) => retention.runTombstone(ctx, runId));
  }

  // RunQueries
  listRuns(query?: RunQuery): Promise<RunPage> {
    return this.op('listRuns', (ctx) => queries.listRuns(ctx, query));
  }

  countRuns(): Promise<RunCounts> {
    return this.op('countRuns', (ctx) => queries.countRuns(ctx));
  }

  reindexRuns(): Promise<number> {
    return this.op('reindexRuns', (ctx) => queries.reindexRuns(ctx));
  }

  // FleetStore
  reportWorker(report: WorkerReport, ttlMs: number): Promise<void> {
    return this.op('reportWorker', (ctx) => fleet.reportWorker(ctx, report, ttlMs));
  }
  listWorkers(): Promise<ReportedWorker[]> {
    return this.op('listWorkers', (ctx) => fleet.listWorkers(ctx));
  }
  forgetWorker(workerId: string): Promise<void> {
    return this.op('forgetWorker', (ctx) => fleet.forgetWorker(ctx, workerId));
  }

  // ScheduleStore
  createSchedule(schedule: NewSchedule): Promise<{ created: boolean; schedule: ScheduleRecord }> {
    return this.op('createSchedule', (ctx) => schedules.createSchedule(ctx, schedule));
  }
  getSchedule(scheduleId: string): Promise<ScheduleRecord | undefined> {
    return this.op('getSchedule', (ctx) => schedules.getSchedule(ctx, scheduleId));
  }
  updateSchedule(
    scheduleId: string,
    expectedRevision: number,
    next: Omit<NewSchedule, 'scheduleId'>,
  ): Promise<ScheduleWrite> {
    return this.op('updateSchedule', (ctx) =>
      schedules.updateSchedule(ctx, scheduleId, expectedRevision, next),
    );
  }
  deleteSchedule(scheduleId: string, expectedRevision?: number): Promise<ScheduleWrite> {
    return this.op('deleteSchedule', (ctx) => schedules.deleteSchedule(ctx, scheduleId, expectedRevision));
  }
  listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    return this.op('listSchedules', (ctx) => schedules.listSchedules(ctx, query));
  }
  dueSchedules(limit: number): Promise<{ now: number; schedules: ScheduleRecord[] }> {
    return this.op('dueSchedules', (ctx) => schedules.dueSchedules(ctx, limit));
  }

  // ConcurrencyStore
  acquireSlot(request: SlotRequest): Promise<SlotAnswer> {
    return this.op('acquireSlot', (ctx) => concurrency.acquireSlot(ctx, request));
  }
  releaseSlot(request: SlotRequest): Promise<string[]> {
    return this.op('releaseSlot', (ctx) => concurrency.releaseSlot(ctx, request));
  }
  slotState(key: string): Promise<SlotState> {
    return this.op('slotState', (ctx) => concurrency.slotState(ctx, key));
  }

  // RateLimitStore
  takeRateToken(request: RateLimitRequest): Promise<RateLimitAnswer> {
    return this.op('takeRateToken', (ctx) => rateLimits.takeRateToken(ctx, request));
  }

  // JournalIndex (group commit across runs)
  readonly journalIndex: JournalIndex = {
    groupsByDefault: true,
    appendPointers: (appends) =>
      this.op('appendPointers', (ctx) => journalIndex.appendPointers(ctx, appends)),
    markOwnJournal: (runId) => this.op('markOwnJournal', (ctx) => journalIndex.markOwnJournal(ctx, runId)),
    readPointers: (runId, after, upto) =>
      this.op('readPointers', (ctx) => journalIndex.readPointers(ctx, runId, after, upto)),
    deletePointers: (runId) => this.op('deletePointers', (ctx) => journalIndex.deletePointers(ctx, runId)),
    groupLogUse: () => this.op('groupLogUse', (ctx) => journalIndex.groupLogUse(ctx)),
    forgetGroupLog: (log, newestRecorded) =>
      this.op('forgetGroupLog', (ctx) => journalIndex.forgetGroupLog(ctx, log, newestRecorded)),
  };

  // PayloadStore
  putPayload(runId: string, sha256: string, data: Uint8Array): Promise<void> {
    return this.op('putPayload', (ctx) => payloads.putPayload(ctx, runId, sha256, data));
  }
  getPayload(runId: string, sha256: string): Promise<Uint8Array | undefined> {
    return this.op('getPayload', (ctx) => payloads.getPayload(ctx, runId, sha256));
  }
  deletePayloads(runIds: readonly string[]): Promise<void> {
    return this.op('deletePayloads', (ctx) => payloads.deletePayloads(ctx, runIds));
  }

  // PresenceStore
  registerWorker(workerId: string): Promise<void> {
    return this.op('registerWorker', () => this.presence.register(workerId));
  }
  unregisterWorker(workerId: string): Promise<void> {
    return this.op('unregisterWorker', (ctx) => this.presence.unregister(ctx, workerId));
  }
  reapDeadWorkers(limit: number, reclaimAfterMs: number): Promise<string[]> {
    return this.op('reapDeadWorkers', (ctx) => this.presence.reapDeadWorkers(ctx, limit, reclaimAfterMs));
  }
  liveWorkers(): Promise<string[]> {
    return this.op('liveWorkers', (ctx) => this.presence.liveWorkers(ctx));
  }
  takeScanTurn(scan: string, workerId: string, turnMs: number): Promise<ScanTurn> {
    return this.op('takeScanTurn', (ctx) => this.presence.takeScanTurn(ctx, scan, workerId, turnMs));
  }
  publishMembership(members: readonly string[]): Promise<number> {
    return this.op('publishMembership', (ctx) => this.presence.publishMembership(ctx, members));
  }
  readMembership(knownGeneration: number, turn: string): Promise<PublishedMembership> {
    return this.op('readMembership', (ctx) => this.presence.readMembership(ctx, knownGeneration, turn));
  }

  // -------------------------------------------------------------------------------------------

  private async op<T>(operation: string, work: (ctx: StoreContext) => Promise<T>): Promise<T> {
    const { ctx, connection } = await this.lifecycle.openOrConnect(operation, () => this.connect());
    try {
      const result = await work(ctx);
      if (this.options.waitReplicas > 0 && REPLICATED_OPERATIONS.has(operation)) {
        await confirmReplicated(connection, this.options, operation, connection.generation());
      }
      return result;
    } catch (err) {
      if (this.isClosed()) throw this.lifecycle.closedError(operation, err);
      throw toStoreError(err, { url: this.options.displayUrl, operation });
    }
  }

  /** Opens the connection, checks it can run scripts and reads the data marker. */
  private async setUp(): Promise<Opened> {
    let connection: StoreConnection | undefined;
    try {
      loadScripts();
      connection = createConnection(this.options);
      this.opening = connection;
      await connection.open();
      const ctx: StoreContext = {
        redis: connection.redis,
        keys: this.keys,
        run: defineScripts(connection.redis),
      };
      // EVALSHA first, on its own, so that a user lacking scripting is told about it by name. The
      // clock script then proves the server answers and lets this user run scripts that read TIME;
      // the marker's first read only remembers it (or writes it): nothing to compare with yet.
      await checkEvalsha(connection.redis);
      await Promise.all([ctx.run('clock', [], []), this.marker.check(ctx)]);
      // A data set from before the query indexes (or an older layout of them) is indexed once.
      await queries.ensureIndexed(ctx);
      // 'ready' fires again after every reconnect (the first one has passed already): a server
      // that came back may have come back empty.
      connection.redis.on('ready', () => void this.marker.recheck(ctx, () => !this.isClosed()));
      return { connection, ctx };
    } catch (err) {
      await connection?.close();
      if (this.isClosed()) throw this.lifecycle.closedError('connect', err);
      throw toStoreError(err, { url: this.options.displayUrl, operation: 'connect' });
    } finally {
      this.opening = undefined;
    }
  }

  /** A method, not a comparison, because close() may change the state across an await. */
  private isClosed(): boolean {
    return this.lifecycle.state === 'closed';
  }
}
