/**
 * The in-process store: the embedded default for the demo and unit tests. No I/O.
 *
 * Invariants:
 * 1. Every method runs to completion without awaiting, so each is atomic exactly as the Lua
 *    scripts and SQL transactions of the real stores are.
 * 2. A lease's epoch only grows; a write (checkpoint, suspend, finish) succeeds only under the
 *    lease's current epoch and never once the lease is finished.
 * 3. A run has a timer only while its lease is suspended: acquiring, waking by signal or cancel,
 *    and finishing all remove it.
 * 4. Values are cloned on the way in and out, so no caller holds a reference into the store.
 */
import type {
  AcquireResult,
  CreatedAndLeased,
  NewRunToLease,
  Checkpoint,
  CheckpointSummary,
  DueTimer,
  InboxSignal,
  LeaseInfo,
  NewRun,
  RenewRequest,
  RenewResult,
  ReopenResult,
  RunOutcome,
  RunRecord,
  RunTombstone,
  Store,
  SuspendRequest,
  SuspendResult,
} from '../contracts/store.js';
import { FINISHED_RUN_STATUSES } from '../contracts/store.js';
import { summarizeCheckpoint } from '../checkpoint-summary.js';
import { BatonError, FencedWriteError, refuseDelete } from '../errors.js';
import { checkStoredCheckpoint } from '../checkpoint-record.js';
import {
  unfinishedStatus,
  type ClaimFailures,
  type LeaseRecord,
  type StoredCheckpoint,
} from './memory-records.js';

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
  return store instanceof MemoryStore && store.damageCheckpoint(runId, seq, stored);
}

const encoder = new TextEncoder();

class MemoryStore implements Store {
  readonly name = 'memory';

  private closed = false;
  private readonly leases = new Map<string, LeaseRecord>();
  /** Kept apart from leases: a run may be cancelled before any worker ever claimed it. */
  private readonly cancelled = new Set<string>();
  /** The reason of a run's first cancel request that gave one. */
  private readonly cancelReasons = new Map<string, string>();
  private readonly runs = new Map<string, RunRecord>();
  private readonly runIdsByKey = new Map<string, string>();
  private readonly checkpoints = new Map<string, StoredCheckpoint[]>();
  private readonly claimFailures = new Map<string, ClaimFailures>();
  private readonly timers = new Map<string, number>();
  private readonly inboxes = new Map<string, InboxSignal[]>();
  private readonly workers = new Set<string>();
  /** Large payloads by run, then by hash (copies, so a caller's buffer may change afterwards). */
  private readonly payloads = new Map<string, Map<string, Uint8Array>>();
  /** Runs the retention sweep deleted, until `expiresAt`. */
  private readonly tombstones = new Map<string, { deletedAt: number; expiresAt: number }>();
  readonly payloadLocation = 'memory';

  constructor(private readonly clock: () => number) {}

  async connect(): Promise<void> {
    this.assertOpen('connect');
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  async now(): Promise<number> {
    this.assertOpen('now');
    return this.clock();
  }

  // -------------------------------------------------------------------------------------------
  // Leases

  async acquireLease(runId: string, owner: string, ttlMs: number): Promise<AcquireResult> {
    this.assertOpen('acquireLease');
    return this.takeLease(runId, owner, ttlMs);
  }

  private takeLease(runId: string, owner: string, ttlMs: number): AcquireResult {
    const now = this.clock();
    const lease = this.leases.get(runId);
    if (lease?.state === 'finished') return { ok: false, reason: 'finished' };
    // An ownerless lease (reaped or handed off) is free even though the reaper moved its expiry on.
    if (
      lease?.state === 'held' &&
      lease.owner !== null &&
      lease.expiresAt !== null &&
      lease.expiresAt > now
    ) {
      return { ok: false, reason: 'held', owner: lease.owner, expiresAt: lease.expiresAt };
    }
    const epoch = (lease?.epoch ?? 0) + 1;
    this.leases.set(runId, { epoch, owner, state: 'held', expiresAt: now + ttlMs, waitingFor: [] });
    this.timers.delete(runId);
    const run = this.runs.get(runId);
    if (run !== undefined) {
      run.status = 'running';
      run.attempts += 1;
      run.updatedAt = now;
    }
    return { ok: true, epoch, cancelRequested: this.cancelled.has(runId) };
  }

  async renewLeases(requests: readonly RenewRequest[], ttlMs: number): Promise<RenewResult[]> {
    this.assertOpen('renewLeases');
    const now = this.clock();
    return requests.map(({ runId, epoch }) => {
      const lease = this.leases.get(runId);
      // An ownerless lease was reaped or handed off: its old holder must stop, even though the
      // reaper moved expiresAt into the future.
      const ok =
        lease !== undefined &&
        lease.state === 'held' &&
        lease.epoch === epoch &&
        lease.owner !== null &&
        lease.expiresAt !== null &&
        lease.expiresAt > now;
      if (ok) lease.expiresAt = now + ttlMs;
      return { runId, ok, cancelRequested: this.cancelled.has(runId) };
    });
  }

  async releaseLease(runId: string, epoch: number): Promise<boolean> {
    this.assertOpen('releaseLease');
    const lease = this.leases.get(runId);
    if (lease === undefined || lease.state !== 'held' || lease.epoch !== epoch) return false;
    this.makeAcquirable(runId, lease);
    return true;
  }

  async suspendRun(request: SuspendRequest): Promise<SuspendResult> {
    this.assertOpen('suspendRun');
    const { runId, epoch } = request;
    const lease = this.leases.get(runId);
    if (lease === undefined || lease.state !== 'held' || lease.epoch !== epoch) {
      throw new FencedWriteError(runId, epoch, 'suspend');
    }
    const consumed = new Set(request.consumedSignalIds);
    const pending = (this.inboxes.get(runId) ?? []).some(
      (s) => request.signals.includes(s.name) && !consumed.has(s.signalId),
    );
    if (pending) return { ok: false, reason: 'signal-pending' };
    if (this.cancelled.has(runId)) return { ok: false, reason: 'cancel-requested' };
    lease.state = 'suspended';
    lease.owner = null;
    lease.expiresAt = null;
    lease.waitingFor = [...request.signals];
    if (request.wakeAt === null) this.timers.delete(runId);
    else this.timers.set(runId, request.wakeAt);
    this.setRunStatus(runId, 'suspended');
    return { ok: true };
  }

  async reapExpiredLeases(limit: number, reclaimAfterMs: number): Promise<string[]> {
    this.assertOpen('reapExpiredLeases');
    const now = this.clock();
    const expired: [string, LeaseRecord][] = [];
    for (const entry of this.leases) {
      const lease = entry[1];
      if (lease.state === 'held' && lease.expiresAt !== null && lease.expiresAt <= now) expired.push(entry);
    }
    expired.sort((a, b) => (a[1].expiresAt ?? 0) - (b[1].expiresAt ?? 0));
    return expired.slice(0, Math.max(0, limit)).map(([runId, lease]) => {
      lease.owner = null;
      lease.expiresAt = now + reclaimAfterMs;
      return runId;
    });
  }

  async requestCancel(runId: string, reason?: string): Promise<{ found: boolean; wake: boolean }> {
    this.assertOpen('requestCancel');
    if (!this.isKnown(runId)) return { found: false, wake: false };
    if (!this.cancelled.has(runId) && reason !== undefined) this.cancelReasons.set(runId, reason);
    this.cancelled.add(runId);
    const lease = this.leases.get(runId);
    if (lease?.state !== 'suspended') return { found: true, wake: false };
    this.makeAcquirable(runId, lease);
    return { found: true, wake: true };
  }

  async recordClaimFailure(runId: string, epoch: number): Promise<number> {
    this.assertOpen('recordClaimFailure');
    this.assertFence(runId, epoch, 'claim failure record');
    const last = this.claimFailures.get(runId);
    if (last?.epoch === epoch) return last.count;
    const count = last?.epoch === epoch - 1 ? last.count + 1 : 1;
    this.claimFailures.set(runId, { epoch, count });
    return count;
  }

  async getLease(runId: string): Promise<LeaseInfo | undefined> {
    this.assertOpen('getLease');
    const lease = this.leases.get(runId);
    if (lease === undefined) return undefined;
    return {
      runId,
      epoch: lease.epoch,
      owner: lease.owner,
      state: lease.state,
      expiresAt: lease.state === 'held' ? lease.expiresAt : null,
      cancelRequested: this.cancelled.has(runId),
      ...(this.cancelReasons.has(runId) && { cancelReason: this.cancelReasons.get(runId) }),
    };
  }

  /** Held by nobody and already expired: any worker may acquire it at once. */
  private makeAcquirable(runId: string, lease: LeaseRecord): void {
    lease.state = 'held';
    lease.owner = null;
    lease.expiresAt = this.clock();
    lease.waitingFor = [];
    this.timers.delete(runId);
  }

  // -------------------------------------------------------------------------------------------
  // Checkpoints

  async writeCheckpoint(checkpoint: Checkpoint): Promise<void> {
    this.assertOpen('writeCheckpoint');
    this.assertFence(checkpoint.runId, checkpoint.epoch, 'checkpoint write');
    this.keepCheckpoint(checkpoint);
  }

  async loadCheckpoint(runId: string, seq?: number): Promise<Checkpoint | undefined> {
    this.assertOpen('loadCheckpoint');
    const history = this.checkpoints.get(runId) ?? [];
    const found = seq === undefined ? history.at(-1) : history.findLast((c) => c.summary.seq === seq);
    if (found === undefined) return undefined;
    return checkStoredCheckpoint(structuredClone(found.checkpoint), runId, found.summary.seq);
  }

  async listCheckpoints(runId: string): Promise<CheckpointSummary[]> {
    this.assertOpen('listCheckpoints');
    return (this.checkpoints.get(runId) ?? []).map(({ summary }) => ({ ...summary }));
  }

  damageCheckpoint(runId: string, seq: number, stored: unknown): boolean {
    const found = this.checkpoints.get(runId)?.findLast((c) => c.summary.seq === seq);
    if (found === undefined) return false;
    found.checkpoint = stored as Checkpoint;
    return true;
  }

  private keepCheckpoint(checkpoint: Checkpoint): void {
    const size = encoder.encode(JSON.stringify(checkpoint)).byteLength;
    const history = this.checkpoints.get(checkpoint.runId) ?? [];
    history.push({
      checkpoint: structuredClone(checkpoint),
      size,
      summary: summarizeCheckpoint(checkpoint, size),
    });
    this.checkpoints.set(checkpoint.runId, history);
  }

  private assertFence(runId: string, epoch: number, what: string): LeaseRecord {
    const lease = this.leases.get(runId);
    if (lease === undefined || lease.epoch !== epoch || lease.state === 'finished') {
      throw new FencedWriteError(runId, epoch, what);
    }
    return lease;
  }

  // -------------------------------------------------------------------------------------------
  // Run index

  async createRun(run: NewRun): Promise<{ created: boolean; run: RunRecord }> {
    this.assertOpen('createRun');
    return this.insertRun(run);
  }

  private insertRun(run: NewRun): { created: boolean; run: RunRecord } {
    const keyedRunId = run.idempotencyKey === null ? undefined : this.runIdsByKey.get(run.idempotencyKey);
    const existing =
      this.runs.get(run.runId) ?? (keyedRunId === undefined ? undefined : this.runs.get(keyedRunId));
    if (existing !== undefined) return { created: false, run: structuredClone(existing) };
    const now = this.clock();
    const record: RunRecord = {
      runId: run.runId,
      workflow: run.workflow,
      version: run.version,
      input: structuredClone(run.input),
      idempotencyKey: run.idempotencyKey,
      status: 'pending',
      createdAt: now,
      updatedAt: now,
      attempts: 0,
      ...(run.traceparent ? { traceparent: run.traceparent } : {}),
      ...(run.forkedFrom ? { forkedFrom: structuredClone(run.forkedFrom) } : {}),
    };
    this.runs.set(run.runId, record);
    if (run.idempotencyKey !== null) this.runIdsByKey.set(run.idempotencyKey, run.runId);
    if (run.checkpoint !== undefined) this.keepCheckpoint(run.checkpoint);
    return { created: true, run: structuredClone(record) };
  }

  async createRunAndLease(run: NewRunToLease, owner: string, ttlMs: number): Promise<CreatedAndLeased> {
    this.assertOpen('createRunAndLease');
    // Both steps run without yielding, so nothing can come between them.
    const created = this.insertRun(run);
    if (!created.created) return { created: false, run: created.run };
    const lease = this.takeLease(run.runId, owner, ttlMs);
    return { created: true, run: structuredClone(this.runs.get(run.runId)!), lease };
  }

  async reopenRun(runId: string, checkpoint: Checkpoint): Promise<ReopenResult> {
    this.assertOpen('reopenRun');
    const run = this.runs.get(runId);
    const lease = this.leases.get(runId);
    if (
      run?.status !== 'failed' ||
      lease === undefined ||
      lease.state !== 'finished' ||
      lease.epoch !== checkpoint.epoch
    ) {
      return { reopened: false, status: run?.status };
    }
    const now = this.clock();
    this.keepCheckpoint(checkpoint);
    this.claimFailures.delete(runId);
    run.status = 'pending';
    delete run.error;
    run.updatedAt = now;
    lease.state = 'held';
    lease.owner = null;
    lease.expiresAt = now;
    lease.waitingFor = [];
    return { reopened: true };
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    this.assertOpen('getRun');
    const run = this.runs.get(runId);
    return run === undefined ? undefined : structuredClone(run);
  }

  async finishRun(runId: string, epoch: number, outcome: RunOutcome, checkpoint?: Checkpoint): Promise<void> {
    this.assertOpen('finishRun');
    const lease = this.assertFence(runId, epoch, 'finishRun');
    const copy = structuredClone(outcome);
    const run = this.runs.get(runId);
    if (run !== undefined) {
      run.status = copy.status;
      if (copy.status === 'completed') run.result = copy.result;
      else run.error = copy.error;
      run.updatedAt = this.clock();
    }
    if (checkpoint !== undefined) this.keepCheckpoint(checkpoint);
    lease.state = 'finished';
    lease.owner = null;
    lease.expiresAt = null;
    lease.waitingFor = [];
    this.timers.delete(runId);
  }

  private setRunStatus(runId: string, status: RunRecord['status']): void {
    const run = this.runs.get(runId);
    if (run === undefined) return;
    run.status = status;
    run.updatedAt = this.clock();
  }

  private isKnown(runId: string): boolean {
    return this.runs.has(runId) || this.leases.has(runId);
  }

  // -------------------------------------------------------------------------------------------
  // Timers and signals

  async claimDueTimers(limit: number, redeliverAfterMs: number): Promise<DueTimer[]> {
    this.assertOpen('claimDueTimers');
    const now = this.clock();
    const due: DueTimer[] = [];
    for (const [runId, dueAt] of this.timers) if (dueAt <= now) due.push({ runId, dueAt });
    due.sort((a, b) => a.dueAt - b.dueAt);
    const claimed = due.slice(0, Math.max(0, limit));
    for (const timer of claimed) this.timers.set(timer.runId, now + redeliverAfterMs);
    return claimed;
  }

  async deliverSignal(
    runId: string,
    signal: Omit<InboxSignal, 'receivedAt'>,
  ): Promise<{ found: boolean; wake: boolean; dropped?: boolean }> {
    this.assertOpen('deliverSignal');
    if (!this.isKnown(runId)) return { found: false, wake: false };
    // Nothing reads a finished run's inbox: keep nothing, say so.
    if (this.leases.get(runId)?.state === 'finished') return { found: true, wake: false, dropped: true };
    const inbox = this.inboxes.get(runId) ?? [];
    if (inbox.some((s) => s.signalId === signal.signalId)) return { found: true, wake: false };
    inbox.push({
      signalId: signal.signalId,
      name: signal.name,
      payload: structuredClone(signal.payload),
      receivedAt: this.clock(),
    });
    this.inboxes.set(runId, inbox);
    const lease = this.leases.get(runId);
    if (lease?.state !== 'suspended' || !lease.waitingFor.includes(signal.name)) {
      return { found: true, wake: false };
    }
    this.makeAcquirable(runId, lease);
    return { found: true, wake: true };
  }

  async readSignals(runId: string): Promise<InboxSignal[]> {
    this.assertOpen('readSignals');
    return structuredClone(this.inboxes.get(runId) ?? []);
  }

  // -------------------------------------------------------------------------------------------
  // Retention

  async expiredRuns(olderThanMs: number, limit: number): Promise<string[]> {
    this.assertOpen('expiredRuns');
    const cutoff = this.clock() - olderThanMs;
    return [...this.runs.values()]
      .filter((run) => FINISHED_RUN_STATUSES.includes(run.status) && run.updatedAt <= cutoff)
      .sort((a, b) => a.updatedAt - b.updatedAt)
      .slice(0, Math.max(0, limit))
      .map((run) => run.runId);
  }

  async deleteRun(runId: string): Promise<boolean> {
    this.assertOpen('deleteRun');
    const run = this.runs.get(runId);
    const lease = this.leases.get(runId);
    if (run === undefined && lease === undefined) {
      // A start message's input may have been stored before any worker created the run.
      this.payloads.delete(runId);
      return false;
    }
    const status = unfinishedStatus(run, lease);
    if (status !== undefined) throw refuseDelete(runId, status);
    if (run?.idempotencyKey != null && this.runIdsByKey.get(run.idempotencyKey) === runId) {
      this.runIdsByKey.delete(run.idempotencyKey);
    }
    this.runs.delete(runId);
    this.leases.delete(runId);
    this.cancelled.delete(runId);
    this.cancelReasons.delete(runId);
    this.checkpoints.delete(runId);
    this.claimFailures.delete(runId);
    this.timers.delete(runId);
    this.inboxes.delete(runId);
    this.payloads.delete(runId);
    return true;
  }

  async deleteExpiredRuns(olderThanMs: number, limit: number, tombstoneMs: number): Promise<string[]> {
    this.assertOpen('deleteExpiredRuns');
    const now = this.clock();
    let dropped = 0;
    for (const [runId, tombstone] of this.tombstones) {
      if (dropped >= limit) break;
      if (tombstone.expiresAt > now) continue;
      this.tombstones.delete(runId);
      dropped += 1;
    }
    const deleted: string[] = [];
    for (const runId of await this.expiredRuns(olderThanMs, limit)) {
      if (!(await this.deleteRun(runId))) continue;
      this.tombstones.set(runId, { deletedAt: now, expiresAt: now + tombstoneMs });
      deleted.push(runId);
    }
    return deleted;
  }

  async runTombstone(runId: string): Promise<RunTombstone | undefined> {
    this.assertOpen('runTombstone');
    const tombstone = this.tombstones.get(runId);
    if (tombstone === undefined || tombstone.expiresAt <= this.clock()) return undefined;
    return { runId, deletedAt: tombstone.deletedAt };
  }

  // -------------------------------------------------------------------------------------------
  // Large payloads

  async putPayload(runId: string, sha256: string, data: Uint8Array): Promise<void> {
    this.assertOpen('putPayload');
    let byHash = this.payloads.get(runId);
    if (byHash === undefined) this.payloads.set(runId, (byHash = new Map()));
    if (!byHash.has(sha256)) byHash.set(sha256, Uint8Array.from(data));
  }

  async getPayload(runId: string, sha256: string): Promise<Uint8Array | undefined> {
    this.assertOpen('getPayload');
    const data = this.payloads.get(runId)?.get(sha256);
    return data === undefined ? undefined : Uint8Array.from(data);
  }

  async deletePayloads(runIds: readonly string[]): Promise<void> {
    this.assertOpen('deletePayloads');
    for (const runId of runIds) this.payloads.delete(runId);
  }

  // -------------------------------------------------------------------------------------------
  // Presence

  async registerWorker(workerId: string): Promise<void> {
    this.assertOpen('registerWorker');
    this.workers.add(workerId);
  }

  async unregisterWorker(workerId: string): Promise<void> {
    this.assertOpen('unregisterWorker');
    this.workers.delete(workerId);
  }

  /**
   * Always empty: an in-process store has no connection that could outlive or drop before its
   * worker, so a crashed in-process worker is found by lease expiry alone.
   */
  async reapDeadWorkers(_limit: number, _reclaimAfterMs: number): Promise<string[]> {
    this.assertOpen('reapDeadWorkers');
    return [];
  }

  async liveWorkers(): Promise<string[]> {
    this.assertOpen('liveWorkers');
    return [...this.workers];
  }

  private assertOpen(operation: string): void {
    if (this.closed) {
      throw new BatonError(
        'BATON_CLOSED',
        `memory store: ${operation} called after close(); create a new store`,
      );
    }
  }
}
