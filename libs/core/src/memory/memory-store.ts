/**
 * The in-process store: the embedded default for the demo and unit tests. No I/O. Its lifecycle
 * and the Store surface are here; the work is in one file per capability, as in the Redis and
 * Postgres stores: memory-leases.ts, memory-checkpoints.ts, memory-runs.ts, memory-waits.ts
 * (suspension, timers, signals, cancel), memory-pause.ts, memory-retention.ts, memory-payloads.ts,
 * memory-queries.ts (listing and counting runs), memory-fleet.ts (the workers' reports) and
 * memory-schedules.ts (schedules), over the
 * maps of memory-state.ts.
 *
 * It has no worker presence ({@link PresenceStore} is optional in the contract): an in-process
 * store has no connection that could drop before its worker, so a crashed in-process worker is
 * found by lease expiry alone.
 *
 * Invariants:
 * 1. Every method runs to completion without awaiting, so each is atomic exactly as the Lua
 *    scripts and SQL transactions of the real stores are.
 * 2. A lease's epoch only grows; a write (checkpoint, suspend, finish) succeeds only under the
 *    lease's current epoch and never once the lease is finished.
 * 3. A run has a timer only while its lease is suspended: acquiring, waking by signal or cancel,
 *    pausing and finishing all remove it.
 * 4. Values are cloned on the way in and out, so no caller holds a reference into the store.
 * 5. After close() every operation fails with BATON_CLOSED; before connect() operations work (an
 *    in-process store has nothing to connect).
 */
import type {
  AcquireResult,
  CancelRequestResult,
  Checkpoint,
  CheckpointSummary,
  CreatedAndLeased,
  DueTimer,
  InboxSignal,
  LeaseInfo,
  NewRun,
  NewRunToLease,
  PauseHeldResult,
  PauseRequestResult,
  RenewRequest,
  RenewResult,
  ResumeResult,
  ReopenResult,
  RunOutcome,
  RunRecord,
  RunTombstone,
  Store,
  SuspendRequest,
  SuspendResult,
} from '../adapter/contracts/store.js';
import type { RunCounts, RunPage, RunQuery } from '../adapter/contracts/run-queries.js';
import type { ReportedWorker, WorkerReport } from '../adapter/contracts/fleet.js';
import type {
  NewSchedule,
  SchedulePage,
  ScheduleQuery,
  ScheduleRecord,
  ScheduleWrite,
} from '../adapter/contracts/schedules.js';
import type {
  JournalIndex,
  GroupLogUse,
  PointerAppend,
  PointerAppendResult,
  RunPointers,
} from '../adapter/contracts/group-journal.js';
import { BatonError } from '../shared/errors.js';
import type { SlotAnswer, SlotRequest, SlotState } from '../adapter/contracts/concurrency.js';
import type { RateLimitAnswer, RateLimitRequest } from '../adapter/contracts/rate-limits.js';
import * as checkpoints from './memory-checkpoints.js';
import * as concurrency from './memory-concurrency.js';
import * as rateLimits from './memory-rate-limits.js';
import * as fleet from './memory-fleet.js';
import * as journalIndex from './memory-journal-index.js';
import * as leases from './memory-leases.js';
import * as payloads from './memory-payloads.js';
import * as pause from './memory-pause.js';
import * as queries from './memory-queries.js';
import * as retention from './memory-retention.js';
import * as runs from './memory-runs.js';
import * as schedules from './memory-schedules.js';
import { MemoryState } from './memory-state.js';
import * as waits from './memory-waits.js';

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /**
   * The store's clock (ms since epoch); inject one to test expiry without waiting.
   * @defaultValue Date.now
   */
  clock?: () => number;
}

/**
 * Creates an in-process {@link Store} with the exact semantics of the contract (leases with
 * fencing epochs, checkpoints with history, run index with idempotency keys, timers, signals).
 *
 * @example
 * const store = memoryStore();
 * const lease = await store.acquireLease('run-1', 'worker-a', 5_000);
 */
export function memoryStore(options: MemoryStoreOptions = {}): Store {
  return new MemoryStore(options.clock ?? Date.now);
}

/**
 * For tests: replaces the body of a memory store's checkpoint `seq` of `runId` with `stored`, as a
 * disk fault or a hand edit would leave it in a real store (its summary stays). Returns false when
 * the store is not a memory store or holds no such checkpoint.
 */
export function damageMemoryCheckpoint(store: Store, runId: string, seq: number, stored: unknown): boolean {
  return store instanceof MemoryStore && checkpoints.damageCheckpoint(store.state, runId, seq, stored);
}

/**
 * - `open`: from creation (nothing to connect);
 * - `closed`: close() was called; every operation then rejects with BATON_CLOSED.
 */
type MemoryStoreState = 'open' | 'closed';

class MemoryStore implements Store {
  readonly name = 'memory';
  readonly payloadLocation = 'memory';
  private lifecycle: MemoryStoreState = 'open';
  readonly state: MemoryState;

  constructor(clock: () => number) {
    this.state = new MemoryState(clock);
  }

  async connect(): Promise<void> {
    this.open('connect');
  }

  async close(): Promise<void> {
    this.lifecycle = 'closed';
  }

  async now(): Promise<number> {
    return this.open('now').clock();
  }

  readonly journalIndex: JournalIndex = {
    groupsByDefault: true,
    appendPointers: async (appends: readonly PointerAppend[]): Promise<PointerAppendResult[]> =>
      journalIndex.appendPointers(this.open('appendPointers'), appends),
    markOwnJournal: async (runId: string): Promise<'own' | 'grouped'> =>
      journalIndex.markOwnJournal(this.open('markOwnJournal'), runId),
    readPointers: async (runId: string, afterPosition: number, uptoPosition?: number): Promise<RunPointers> =>
      journalIndex.readPointers(this.open('readPointers'), runId, afterPosition, uptoPosition),
    deletePointers: async (runId: string): Promise<void> =>
      journalIndex.deletePointers(this.open('deletePointers'), runId),
    groupLogUse: async (): Promise<GroupLogUse[]> => journalIndex.groupLogUse(this.open('groupLogUse')),
    forgetGroupLog: async (log: string, newestRecorded: number): Promise<boolean> =>
      journalIndex.forgetGroupLog(this.open('forgetGroupLog'), log, newestRecorded),
  };

  // LeaseStore
  async acquireLease(runId: string, owner: string, ttlMs: number): Promise<AcquireResult> {
    return leases.acquireLease(this.open('acquireLease'), runId, owner, ttlMs);
  }
  async renewLeases(requests: readonly RenewRequest[], ttlMs: number): Promise<RenewResult[]> {
    return leases.renewLeases(this.open('renewLeases'), requests, ttlMs);
  }
  async releaseLease(runId: string, epoch: number): Promise<boolean> {
    return leases.releaseLease(this.open('releaseLease'), runId, epoch);
  }
  async suspendRun(request: SuspendRequest): Promise<SuspendResult> {
    return waits.suspendRun(this.open('suspendRun'), request);
  }
  async reapExpiredLeases(limit: number, reclaimAfterMs: number): Promise<string[]> {
    return leases.reapExpiredLeases(this.open('reapExpiredLeases'), limit, reclaimAfterMs);
  }
  async requestCancel(runId: string, reason?: string): Promise<CancelRequestResult> {
    return waits.requestCancel(this.open('requestCancel'), runId, reason);
  }
  async closeCancels(
    runId: string,
    epoch: number,
  ): Promise<{ cancelRequested: boolean; cancelReason?: string }> {
    return waits.closeCancels(this.open('closeCancels'), runId, epoch);
  }
  watchCancels(workerId: string, listener: (runId: string) => void): () => void {
    return waits.watchCancels(this.state, workerId, listener);
  }
  async requestPause(runId: string, reason?: string): Promise<PauseRequestResult> {
    return pause.requestPause(this.open('requestPause'), runId, reason);
  }
  async pauseHeldRun(runId: string, epoch: number): Promise<PauseHeldResult> {
    return pause.pauseHeldRun(this.open('pauseHeldRun'), runId, epoch);
  }
  async resumeRun(runId: string): Promise<ResumeResult> {
    return pause.resumeRun(this.open('resumeRun'), runId);
  }
  async recordClaimFailure(runId: string, epoch: number): Promise<number> {
    return leases.recordClaimFailure(this.open('recordClaimFailure'), runId, epoch);
  }
  async getLease(runId: string): Promise<LeaseInfo | undefined> {
    return leases.getLease(this.open('getLease'), runId);
  }

  // CheckpointStore
  async writeCheckpoint(checkpoint: Checkpoint): Promise<void> {
    checkpoints.writeCheckpoint(this.open('writeCheckpoint'), checkpoint);
  }
  async loadCheckpoint(runId: string, seq?: number): Promise<Checkpoint | undefined> {
    return checkpoints.loadCheckpoint(this.open('loadCheckpoint'), runId, seq);
  }
  async listCheckpoints(runId: string): Promise<CheckpointSummary[]> {
    return checkpoints.listCheckpoints(this.open('listCheckpoints'), runId);
  }

  // RunIndex
  async createRun(run: NewRun): Promise<{ created: boolean; run: RunRecord }> {
    return runs.createRun(this.open('createRun'), run);
  }
  async createRunAndLease(run: NewRunToLease, owner: string, ttlMs: number): Promise<CreatedAndLeased> {
    return runs.createRunAndLease(this.open('createRunAndLease'), run, owner, ttlMs);
  }
  async reopenRun(runId: string, checkpoint: Checkpoint): Promise<ReopenResult> {
    return runs.reopenRun(this.open('reopenRun'), runId, checkpoint);
  }
  async getRun(runId: string): Promise<RunRecord | undefined> {
    return runs.getRun(this.open('getRun'), runId);
  }
  async finishRun(runId: string, epoch: number, outcome: RunOutcome, checkpoint?: Checkpoint): Promise<void> {
    runs.finishRun(this.open('finishRun'), runId, epoch, outcome, checkpoint);
  }

  // RunQueries
  async listRuns(query?: RunQuery): Promise<RunPage> {
    return queries.listRuns(this.open('listRuns'), query);
  }
  async countRuns(): Promise<RunCounts> {
    return queries.countRuns(this.open('countRuns'));
  }

  // FleetStore
  async reportWorker(report: WorkerReport, ttlMs: number): Promise<void> {
    fleet.reportWorker(this.open('reportWorker'), report, ttlMs);
  }
  async listWorkers(): Promise<ReportedWorker[]> {
    return fleet.listWorkers(this.open('listWorkers'));
  }
  async forgetWorker(workerId: string): Promise<void> {
    fleet.forgetWorker(this.open('forgetWorker'), workerId);
  }

  // ScheduleStore
  async createSchedule(schedule: NewSchedule): Promise<{ created: boolean; schedule: ScheduleRecord }> {
    return schedules.createSchedule(this.open('createSchedule'), schedule);
  }
  async getSchedule(scheduleId: string): Promise<ScheduleRecord | undefined> {
    return schedules.getSchedule(this.open('getSchedule'), scheduleId);
  }
  async updateSchedule(
    scheduleId: string,
    expectedRevision: number,
    next: Omit<NewSchedule, 'scheduleId'>,
  ): Promise<ScheduleWrite> {
    return schedules.updateSchedule(this.open('updateSchedule'), scheduleId, expectedRevision, next);
  }
  async deleteSchedule(scheduleId: string, expectedRevision?: number): Promise<ScheduleWrite> {
    return schedules.deleteSchedule(this.open('deleteSchedule'), scheduleId, expectedRevision);
  }
  async listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    return schedules.listSchedules(this.open('listSchedules'), query);
  }
  async dueSchedules(limit: number): Promise<{ now: number; schedules: ScheduleRecord[] }> {
    return schedules.dueSchedules(this.open('dueSchedules'), limit);
  }

  // ConcurrencyStore
  async acquireSlot(request: SlotRequest): Promise<SlotAnswer> {
    return concurrency.acquireSlot(this.open('acquireSlot'), request);
  }
  async releaseSlot(request: SlotRequest): Promise<string[]> {
    return concurrency.releaseSlot(this.open('releaseSlot'), request);
  }
  async slotState(key: string): Promise<SlotState> {
    return concurrency.slotState(this.open('slotState'), key);
  }

  // RateLimitStore
  async takeRateToken(request: RateLimitRequest): Promise<RateLimitAnswer> {
    return rateLimits.takeRateToken(this.open('takeRateToken'), request);
  }

  // TimerStore and SignalInbox
  async claimDueTimers(limit: number, redeliverAfterMs: number): Promise<DueTimer[]> {
    return waits.claimDueTimers(this.open('claimDueTimers'), limit, redeliverAfterMs);
  }
  async deliverSignal(
    runId: string,
    signal: Omit<InboxSignal, 'receivedAt'>,
  ): Promise<{ found: boolean; wake: boolean; dropped?: boolean }> {
    return waits.deliverSignal(this.open('deliverSignal'), runId, signal);
  }
  async readSignals(runId: string): Promise<InboxSignal[]> {
    return waits.readSignals(this.open('readSignals'), runId);
  }

  // RetentionStore
  async expiredRuns(olderThanMs: number, limit: number): Promise<string[]> {
    return retention.expiredRuns(this.open('expiredRuns'), olderThanMs, limit);
  }
  async deleteRun(runId: string): Promise<boolean> {
    return retention.deleteRun(this.open('deleteRun'), runId);
  }
  async deleteExpiredRuns(olderThanMs: number, limit: number, tombstoneMs: number): Promise<string[]> {
    return retention.deleteExpiredRuns(this.open('deleteExpiredRuns'), olderThanMs, limit, tombstoneMs);
  }
  async runTombstone(runId: string): Promise<RunTombstone | undefined> {
    return retention.runTombstone(this.open('runTombstone'), runId);
  }

  // PayloadStore
  async putPayload(runId: string, sha256: string, data: Uint8Array): Promise<void> {
    payloads.putPayload(this.open('putPayload'), runId, sha256, data);
  }
  async getPayload(runId: string, sha256: string): Promise<Uint8Array | undefined> {
    return payloads.getPayload(this.open('getPayload'), runId, sha256);
  }
  async deletePayloads(runIds: readonly string[]): Promise<void> {
    payloads.deletePayloads(this.open('deletePayloads'), runIds);
  }

  /** The store's data, or BATON_CLOSED naming the operation after close(). */
  private open(operation: string): MemoryState {
    if (this.lifecycle === 'closed') {
      throw new BatonError(
        'BATON_CLOSED',
        `memory store: ${operation} called after close(); create a new store`,
      );
    }
    return this.state;
  }
}
