/**
 * What the in-process store holds, shared by its capability files (memory-leases.ts,
 * memory-control.ts, memory-checkpoints.ts, memory-runs.ts, memory-waits.ts, memory-retention.ts,
 * memory-payloads.ts and the others), and the few steps more than one of them takes. The Redis and Postgres
 * stores keep the same data in keys and tables; here it is maps.
 *
 * Every function here and in the capability files runs to completion without awaiting, so each
 * store operation is atomic exactly as the Lua scripts and SQL transactions of the real stores are.
 */
import type { JournalPointer } from '../adapter/contracts/group-journal.js';
import type { DepartedWorker, ReportedWorker } from '../adapter/contracts/fleet.js';
import type { ScheduleRecord } from '../adapter/contracts/schedules.js';
import type { SlotState } from '../adapter/contracts/concurrency.js';
import type { Checkpoint } from '../adapter/contracts/checkpoints.js';
import type { RunRecord } from '../adapter/contracts/run-record.js';
import type { InboxSignal } from '../adapter/contracts/waits.js';
import type { KeptUpdate, UpdateRequest } from '../adapter/contracts/updates.js';
import type { PromiseRecord } from '../adapter/contracts/promises.js';
import { summarizeCheckpoint } from '../adapter/checkpoint-summary.js';
import { FencedWriteError } from '../adapter/errors.js';
import type { ClaimFailures, LeaseRecord, StoredCheckpoint } from './memory-records.js';

/** A run's pointers in position order, or the mark that it is journaled on its own. */
export interface StoredPointers {
  ownJournal: boolean;
  pointers: JournalPointer[];
}

export class MemoryState {
  readonly leases = new Map<string, LeaseRecord>();
  /** Kept apart from leases: a run may be cancelled before any worker ever claimed it. */
  readonly cancelled = new Set<string>();
  /** The reason of a run's first cancel request that gave one. */
  readonly cancelReasons = new Map<string, string>();
  /** Runs a live owner holds whose pause was requested (memory-control.ts). */
  readonly pauseRequested = new Set<string>();
  /** The reason of a run's first pause request that gave one, while paused or requested. */
  readonly pauseReasons = new Map<string, string>();
  readonly runs = new Map<string, RunRecord>();
  readonly runIdsByKey = new Map<string, string>();
  readonly checkpoints = new Map<string, StoredCheckpoint[]>();
  readonly claimFailures = new Map<string, ClaimFailures>();
  readonly timers = new Map<string, number>();
  readonly inboxes = new Map<string, InboxSignal[]>();
  /** Update requests not settled yet, in arrival order, and settled ones by id (memory-updates.ts). */
  readonly updates = new Map<string, { pending: UpdateRequest[]; kept: Map<string, KeptUpdate> }>();
  /** Large payloads by run, then by hash (copies, so a caller's buffer may change afterwards). */
  readonly payloads = new Map<string, Map<string, Uint8Array>>();
  /** Runs the retention sweep deleted, until `expiresAt`. */
  readonly tombstones = new Map<string, { deletedAt: number; expiresAt: number }>();
  /** The workers' latest reports (memory-fleet.ts), by worker id. */
  readonly workerReports = new Map<string, ReportedWorker>();
  /** How long each worker's report is kept as departed once it expires (memory-fleet.ts). */
  readonly departedKeepMs = new Map<string, number>();
  /** Departed workers, by worker id, until their `keptUntil` (memory-fleet.ts). */
  readonly departedWorkers = new Map<string, DepartedWorker>();
  /** Each run's pointers into group records (memory-journal-index.ts). */
  readonly pointers = new Map<string, StoredPointers>();
  /** Group logs a pointer was accepted into, with the newest such record (memory-journal-index.ts). */
  readonly groupLogs = new Map<string, number>();
  /** Schedules by id (memory-schedules.ts). */
  readonly schedules = new Map<string, ScheduleRecord>();
  /** Concurrency slots by key (memory-concurrency.ts). */
  readonly slots = new Map<string, SlotState>();
  /** Rate limit grant times, oldest first, by `<name>|<key>` (memory-rate-limits.ts). */
  readonly rateGrants = new Map<string, number[]>();
  /** Durable promises by token (memory-promises.ts). */
  readonly promises = new Map<string, PromiseRecord>();
  /** Who is told of an accepted cancel of a run a worker holds, by worker id (watchCancels). */
  readonly cancelWatchers = new Map<string, Set<(runId: string) => void>>();

  constructor(
    /** The store's clock (ms since epoch). */
    readonly clock: () => number,
  ) {}
}

/** Held by nobody and already expired: any worker may acquire it at once. */
export function makeAcquirable(state: MemoryState, runId: string, lease: LeaseRecord): void {
  lease.state = 'held';
  lease.owner = null;
  lease.expiresAt = state.clock();
  lease.waitingFor = [];
  state.timers.delete(runId);
}

/**
 * Paused: no owner, no expiry, no timer, no pause request; the record `paused`. A lease that was
 * ever held moves to the next epoch, so its last holder's late writes are fenced.
 */
export function pauseLease(state: MemoryState, runId: string, lease: LeaseRecord): void {
  if (lease.epoch > 0) lease.epoch += 1;
  lease.state = 'paused';
  lease.owner = null;
  lease.expiresAt = null;
  lease.waitingFor = [];
  state.timers.delete(runId);
  state.pauseRequested.delete(runId);
  setRunStatus(state, runId, 'paused');
}

/** The run's lease, when `epoch` is its current one and the run is not finished; else FencedWriteError. */
export function assertFence(state: MemoryState, runId: string, epoch: number, what: string): LeaseRecord {
  const lease = state.leases.get(runId);
  if (lease === undefined || lease.epoch !== epoch || lease.state === 'finished') {
    throw new FencedWriteError(runId, epoch, what);
  }
  return lease;
}

/**
 * Appends a copy of `checkpoint` to its run's history, with its summary kept apart from the body.
 * The copy is made from the JSON the size is measured on, so the checkpoint is walked once (a
 * structured clone was a second walk, and the biggest single cost of the in-process store); it is
 * also what a real store keeps, since Redis and Postgres hold checkpoints as JSON.
 */
export function keepCheckpoint(state: MemoryState, checkpoint: Checkpoint): void {
  const json = JSON.stringify(checkpoint);
  const size = Buffer.byteLength(json, 'utf8');
  const history = state.checkpoints.get(checkpoint.runId) ?? [];
  history.push({
    checkpoint: JSON.parse(json) as Checkpoint,
    size,
    summary: summarizeCheckpoint(checkpoint, size),
  });
  state.checkpoints.set(checkpoint.runId, history);
}

export function setRunStatus(state: MemoryState, runId: string, status: RunRecord['status']): void {
  const run = state.runs.get(runId);
  if (run === undefined) return;
  run.status = status;
  run.updatedAt = state.clock();
}

/** A run is known by its record or, claimed without runs.create, by its lease alone. */
export function isKnown(state: MemoryState, runId: string): boolean {
  return state.runs.has(runId) || state.leases.has(runId);
}
