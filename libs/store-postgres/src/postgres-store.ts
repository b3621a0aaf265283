/**
 * The Postgres {@link Store}: lifecycle, and one method per contract operation delegating to the
 * capability modules (leases, checkpoints, runs, waits, presence, the journal index).
 *
 * Lifecycle, the one every adapter shares (`AdapterLifecycle`): `created` (no connection yet) →
 * `connecting` (first connection, migrations) → `ready` → `closed` (final; every operation
 * throws BATON_CLOSED). An operation called before connect() connects first. A failed connect()
 * returns to `created`, so it can be retried. The pool exists from construction on and opens
 * connections as it needs them; connect() only proves the server answers and migrates.
 */
import type {
  AcquireResult,
  CancelRequestResult,
  CreatedAndLeased,
  NewRunToLease,
  Checkpoint,
  CheckpointSummary,
  DueTimer,
  GroupLogUse,
  InboxSignal,
  JournalIndex,
  LeaseInfo,
  PauseHeldResult,
  PauseRequestResult,
  ResumeResult,
  NewRun,
  RenewRequest,
  RenewResult,
  ReopenResult,
  RunOutcome,
  RunCounts,
  RunPage,
  RunQuery,
  RunRecord,
  RunTombstone,
  PresenceStore,
  ReportedWorker,
  Store,
  SuspendRequest,
  SuspendResult,
  WorkerReport,
  PublishedMembership,
  ScanTurn,
  RateLimitAnswer,
  RateLimitRequest,
  SlotAnswer,
  SlotRequest,
  SlotState,
  PointerAppend,
  PointerAppendResult,
  RunPointers,
  NewSchedule,
  SchedulePage,
  ScheduleQuery,
  ScheduleRecord,
  ScheduleWrite,
} from '@baton/core/adapter';
import { AdapterLifecycle } from '@baton/core/adapter';
import * as checkpoints from './checkpoints.js';
import { Db } from './db.js';
import * as fleet from './fleet.js';
import { connectError, operationError } from './errors.js';
import * as journalIndex from './journal-index.js';
import * as leases from './leases.js';
import { migrate } from './migrations.js';
import type { ResolvedPostgresStoreOptions } from './options.js';
import * as pause from './pause.js';
import * as payloads from './payloads.js';
import * as presence from './presence.js';
import * as concurrency from './concurrency.js';
import * as rateLimits from './rate-limits.js';
import * as queries from './queries.js';
import { checkSynchronousStandby } from './replication.js';
import * as retention from './retention.js';
import * as schedules from './schedules.js';
import * as runs from './runs.js';
import * as waits from './waits.js';

/**
 * Where a store is in its life; see the module comment. `ready` is the lifecycle's `open`, under
 * the name this store has always reported.
 */
export type PostgresStoreState = 'created' | 'connecting' | 'ready' | 'closed';

export class PostgresStore implements Store, PresenceStore {
  readonly name = 'postgres';
  readonly payloadLocation = 'postgres';

  /** Opens onto the pool, once the server answered and the schema is migrated. */
  private readonly lifecycle = new AdapterLifecycle<Db>({
    adapter: 'postgres store',
    connectHint: 'await store.connect() first',
    closedHint: 'create a new store',
  });
  private readonly db: Db;
  private readonly registry: presence.PresenceRegistry;

  constructor(readonly options: ResolvedPostgresStoreOptions) {
    this.db = new Db(options);
    this.registry = new presence.PresenceRegistry(this.db, options);
  }

  /** The lifecycle state. */
  get state(): PostgresStoreState {
    const state = this.lifecycle.state;
    return state === 'open' ? 'ready' : state;
  }

  connect(): Promise<void> {
    // Nothing to release when close() overtakes a connect: close() ends the pool either way.
    return this.lifecycle.connect(
      () => this.prepare(),
      async () => {},
    );
  }

  close(): Promise<void> {
    return this.lifecycle.close(async () => {
      // Each step runs even when another fails: presence sessions first (they live outside the pool).
      await this.registry.closeAll().catch(() => undefined);
      await this.db.end().catch(() => undefined);
    });
  }

  /** One connection proves the server answers; the schema is migrated on it. */
  private async prepare(): Promise<Db> {
    let client;
    try {
      client = await this.db.pool.connect();
    } catch (err) {
      throw connectError(err, this.options);
    }
    try {
      await checkSynchronousStandby(client, this.options);
      await migrate(client, this.options);
    } catch (err) {
      throw connectError(err, this.options);
    } finally {
      client.release();
    }
    return this.db;
  }

  /** Runs one operation: refuses after close, connects first if needed, wraps pg errors. */
  private async run<T>(operation: string, body: (db: Db) => Promise<T>): Promise<T> {
    const db = await this.lifecycle.openOrConnect(operation, () => this.connect());
    try {
      return await body(db);
    } catch (err) {
      if (this.isClosed()) throw this.lifecycle.closedError(operation, err);
      throw operationError(operation, err, this.options);
    }
  }

  /** A method, not a comparison, because close() may change the state across an await. */
  private isClosed(): boolean {
    return this.lifecycle.state === 'closed';
  }

  // Leases ---------------------------------------------------------------------------------------

  acquireLease(runId: string, owner: string, ttlMs: number): Promise<AcquireResult> {
    return this.run('acquireLease', (db) => leases.acquireLease(db, runId, owner, ttlMs));
  }
  renewLeases(requests: readonly RenewRequest[], ttlMs: number): Promise<RenewResult[]> {
    return this.run('renewLeases', (db) => leases.renewLeases(db, requests, ttlMs));
  }
  releaseLease(runId: string, epoch: number): Promise<boolean> {
    return this.run('releaseLease', (db) => leases.releaseLease(db, runId, epoch));
  }
  reapExpiredLeases(limit: number, reclaimAfterMs: number): Promise<string[]> {
    return this.run('reapExpiredLeases', (db) => leases.reapExpiredLeases(db, limit, reclaimAfterMs));
  }
  getLease(runId: string): Promise<LeaseInfo | undefined> {
    return this.run('getLease', (db) => leases.getLease(db, runId));
  }
  now(): Promise<number> {
    return this.run('now', (db) => leases.storeNow(db));
  }
  recordClaimFailure(runId: string, epoch: number): Promise<number> {
    return this.run('recordClaimFailure', (db) => leases.recordClaimFailure(db, runId, epoch));
  }

  // Waits ----------------------------------------------------------------------------------------

  suspendRun(request: SuspendRequest): Promise<SuspendResult> {
    return this.run('suspendRun', (db) => waits.suspendRun(db, request));
  }
  requestCancel(runId: string, reason?: string): Promise<CancelRequestResult> {
    const channel = presence.cancelsChannel(this.options.schema);
    return this.run('requestCancel', (db) => waits.requestCancel(db, runId, reason, channel));
  }
  closeCancels(runId: string, epoch: number): Promise<{ cancelRequested: boolean; cancelReason?: string }> {
    return this.run('closeCancels', (db) => waits.closeCancels(db, runId, epoch));
  }
  watchCancels(workerId: string, listener: (runId: string) => void): () => void {
    return this.registry.watchCancels(workerId, listener);
  }
  requestPause(runId: string, reason?: string): Promise<PauseRequestResult> {
    return this.run('requestPause', (db) => pause.requestPause(db, runId, reason));
  }
  pauseHeldRun(runId: string, epoch: number): Promise<PauseHeldResult> {
    return this.run('pauseHeldRun', (db) => pause.pauseHeldRun(db, runId, epoch));
  }
  resumeRun(runId: string): Promise<ResumeResult> {
    return this.run('resumeRun', (db) => pause.resumeRun(db, runId));
  }
  deliverSignal(
    runId: string,
    signal: Omit<InboxSignal, 'receivedAt'>,
  ): Promise<{ found: boolean; wake: boolean; dropped?: boolean }> {
    return this.run('deliverSignal', (db) => waits.deliverSignal(db, runId, signal));
  }
  readSignals(runId: string): Promise<InboxSignal[]> {
    return this.run('readSignals', (db) => waits.readSignals(db, runId));
  }
  claimDueTimers(limit: number, redeliverAfterMs: number): Promise<DueTimer[]> {
    return this.run('claimDueTimers', (db) => waits.claimDueTimers(db, limit, redeliverAfterMs));
  }

  // Checkpoints and runs -------------------------------------------------------------------------

  writeCheckpoint(checkpoint: Checkpoint): Promise<void> {
    return this.run('writeCheckpoint', (db) => checkpoints.writeCheckpoint(db, checkpoint));
  }
  loadCheckpoint(runId: string, seq?: number): Promise<Checkpoint | undefined> {
    return this.run('loadCheckpoint', (db) => checkpoints.loadCheckpoint(db, runId, seq));
  }
  listCheckpoints(runId: string): Promise<CheckpointSummary[]> {
    return this.run('listCheckpoints', (db) => checkpoints.listCheckpoints(db, runId));
  }
  createRun(run: NewRun): Promise<{ created: boolean; run: RunRecord }> {
    return this.run('createRun', (db) => runs.createRun(db, run));
  }
  createRunAndLease(run: NewRunToLease, owner: string, ttlMs: number): Promise<CreatedAndLeased> {
    return this.run('createRunAndLease', (db) => runs.createRunAndLease(db, run, owner, ttlMs));
  }
  getRun(runId: string): Promise<RunRecord | undefined> {
    return this.run('getRun', (db) => runs.getRun(db, runId));
  }
  finishRun(runId: string, epoch: number, outcome: RunOutcome, checkpoint?: Checkpoint): Promise<void> {
    return this.run('finishRun', (db) => runs.finishRun(db, runId, epoch, outcome, checkpoint));
  }
  reopenRun(runId: string, checkpoint: Checkpoint): Promise<ReopenResult> {
    return this.run('reopenRun', (db) => runs.reopenRun(db, runId, checkpoint));
  }

  // Run queries ----------------------------------------------------------------------------------

  listRuns(query?: RunQuery): Promise<RunPage> {
    return this.run('listRuns', (db) => queries.listRuns(db, query));
  }
  countRuns(): Promise<RunCounts> {
    return this.run('countRuns', (db) => queries.countRuns(db));
  }

  // Fleet ----------------------------------------------------------------------------------------

  reportWorker(report: WorkerReport, ttlMs: number): Promise<void> {
    return this.run('reportWorker', (db) => fleet.reportWorker(db, report, ttlMs));
  }
  listWorkers(): Promise<ReportedWorker[]> {
    return this.run('listWorkers', (db) => fleet.listWorkers(db));
  }
  forgetWorker(workerId: string): Promise<void> {
    return this.run('forgetWorker', (db) => fleet.forgetWorker(db, workerId));
  }

  // Schedules ------------------------------------------------------------------------------------

  createSchedule(schedule: NewSchedule): Promise<{ created: boolean; schedule: ScheduleRecord }> {
    return this.run('createSchedule', (db) => schedules.createSchedule(db, schedule));
  }
  getSchedule(scheduleId: string): Promise<ScheduleRecord | undefined> {
    return this.run('getSchedule', (db) => schedules.getSchedule(db, scheduleId));
  }
  updateSchedule(
    scheduleId: string,
    expectedRevision: number,
    next: Omit<NewSchedule, 'scheduleId'>,
  ): Promise<ScheduleWrite> {
    return this.run('updateSchedule', (db) =>
      schedules.updateSchedule(db, scheduleId, expectedRevision, next),
    );
  }
  deleteSchedule(scheduleId: string, expectedRevision?: number): Promise<ScheduleWrite> {
    return this.run('deleteSchedule', (db) => schedules.deleteSchedule(db, scheduleId, expectedRevision));
  }
  listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    return this.run('listSchedules', (db) => schedules.listSchedules(db, query));
  }
  dueSchedules(limit: number): Promise<{ now: number; schedules: ScheduleRecord[] }> {
    return this.run('dueSchedules', (db) => schedules.dueSchedules(db, limit));
  }

  // Retention ------------------------------------------------------------------------------------

  expiredRuns(olderThanMs: number, limit: number): Promise<string[]> {
    return this.run('expiredRuns', (db) => retention.expiredRuns(db, olderThanMs, limit));
  }
  deleteRun(runId: string): Promise<boolean> {
    return this.run('deleteRun', (db) => retention.deleteRun(db, runId));
  }
  deleteExpiredRuns(olderThanMs: number, limit: number, tombstoneMs: number): Promise<string[]> {
    return this.run('deleteExpiredRuns', (db) =>
      retention.deleteExpiredRuns(db, olderThanMs, limit, tombstoneMs),
    );
  }
  runTombstone(runId: string): Promise<RunTombstone | undefined> {
    return this.run('runTombstone', (db) => retention.runTombstone(db, runId));
  }

  // Large payloads ------------------------------------------------------------------------------

  putPayload(runId: string, sha256: string, data: Uint8Array): Promise<void> {
    return this.run('putPayload', (db) => payloads.putPayload(db, runId, sha256, data));
  }
  getPayload(runId: string, sha256: string): Promise<Uint8Array | undefined> {
    return this.run('getPayload', (db) => payloads.getPayload(db, runId, sha256));
  }
  deletePayloads(runIds: readonly string[]): Promise<void> {
    return this.run('deletePayloads', (db) => payloads.deletePayloads(db, runIds));
  }

  // Journal index (group commit across runs) ---------------------------------------------------

  readonly journalIndex: JournalIndex = {
    // One run's steps each wait for a SQL function call: per run is as fast and lower in latency
    // on Postgres (docs/performance.md, "Group commit on Postgres").
    groupsByDefault: false,
    appendPointers: (appends: readonly PointerAppend[]): Promise<PointerAppendResult[]> =>
      this.run('appendPointers', (db) => journalIndex.appendPointers(db, appends)),
    markOwnJournal: (runId: string): Promise<'own' | 'grouped'> =>
      this.run('markOwnJournal', (db) => journalIndex.markOwnJournal(db, runId)),
    readPointers: (runId: string, afterPosition: number, uptoPosition?: number): Promise<RunPointers> =>
      this.run('readPointers', (db) => journalIndex.readPointers(db, runId, afterPosition, uptoPosition)),
    deletePointers: (runId: string): Promise<void> =>
      this.run('deletePointers', (db) => journalIndex.deletePointers(db, runId)),
    groupLogUse: (): Promise<GroupLogUse[]> => this.run('groupLogUse', (db) => journalIndex.groupLogUse(db)),
    forgetGroupLog: (log: string, newestRecorded: number): Promise<boolean> =>
      this.run('forgetGroupLog', (db) => journalIndex.forgetGroupLog(db, log, newestRecorded)),
  };

  // Presence -------------------------------------------------------------------------------------

  async registerWorker(workerId: string): Promise<void> {
    await this.lifecycle.openOrConnect('registerWorker', () => this.connect());
    try {
      await this.registry.register(workerId);
    } catch (err) {
      // A presence session is a connection of its own: its failures read as connect failures.
      if (this.isClosed()) throw this.lifecycle.closedError('registerWorker', err);
      throw connectError(err, this.options);
    }
  }
  unregisterWorker(workerId: string): Promise<void> {
    return this.run('unregisterWorker', () => this.registry.unregister(workerId));
  }
  reapDeadWorkers(limit: number, reclaimAfterMs: number): Promise<string[]> {
    return this.run('reapDeadWorkers', (db) => presence.reapDeadWorkers(db, limit, reclaimAfterMs));
  }
  liveWorkers(): Promise<string[]> {
    return this.run('liveWorkers', (db) => presence.liveWorkers(db));
  }
  // ConcurrencyStore
  acquireSlot(request: SlotRequest): Promise<SlotAnswer> {
    return this.run('acquireSlot', (db) => concurrency.acquireSlot(db, request));
  }
  releaseSlot(request: SlotRequest): Promise<string[]> {
    return this.run('releaseSlot', (db) => concurrency.releaseSlot(db, request));
  }
  slotState(key: string): Promise<SlotState> {
    return this.run('slotState', (db) => concurrency.slotState(db, key));
  }
  // RateLimitStore
  takeRateToken(request: RateLimitRequest): Promise<RateLimitAnswer> {
    return this.run('takeRateToken', (db) => rateLimits.takeRateToken(db, request));
  }
  takeScanTurn(scan: string, workerId: string, turnMs: number): Promise<ScanTurn> {
    return this.run('takeScanTurn', (db) => presence.takeScanTurn(db, scan, workerId, turnMs));
  }
  publishMembership(members: readonly string[]): Promise<number> {
    return this.run('publishMembership', (db) => this.registry.publishMembership(db, members));
  }
  watchMembership(workerId: string, listener: () => void): () => void {
    return this.registry.watchMembership(workerId, listener);
  }
  readMembership(knownGeneration: number, turn: string): Promise<PublishedMembership> {
    return this.run('readMembership', (db) => presence.readMembership(db, knownGeneration, turn));
  }
}
