/** The in-process store's {@link RetentionStore} (`store.retention`): finished runs past their time, and deleting one. */
import type { RetentionStore, RunTombstone } from '../adapter/contracts/retention.js';
import { FINISHED_RUN_STATUSES } from '../adapter/contracts/run-record.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import { refuseDelete } from '../adapter/errors.js';
import { unfinishedStatus } from './memory-records.js';
import type { MemoryState } from './memory-state.js';
import { deletePromisesOf } from './memory-promises.js';

function expired(state: MemoryState, olderThanMs: number, limit: number): string[] {
  const cutoff = state.clock() - olderThanMs;
  return [...state.runs.values()]
    .filter((run) => FINISHED_RUN_STATUSES.includes(run.status) && run.updatedAt <= cutoff)
    .sort((a, b) => a.updatedAt - b.updatedAt)
    .slice(0, Math.max(0, limit))
    .map((run) => run.runId);
}

function deleteRun(state: MemoryState, runId: string): boolean {
  const run = state.runs.get(runId);
  const lease = state.leases.get(runId);
  if (run === undefined && lease === undefined) {
    // A start message's input may have been stored before any worker created the run.
    state.payloads.delete(runId);
    return false;
  }
  const status = unfinishedStatus(run, lease);
  if (status !== undefined) throw refuseDelete(runId, status);
  if (run?.idempotencyKey != null && state.runIdsByKey.get(run.idempotencyKey) === runId) {
    state.runIdsByKey.delete(run.idempotencyKey);
  }
  state.runs.delete(runId);
  state.leases.delete(runId);
  state.pointers.delete(runId);
  state.cancelled.delete(runId);
  state.cancelReasons.delete(runId);
  state.pauseRequested.delete(runId);
  state.pauseReasons.delete(runId);
  state.checkpoints.delete(runId);
  state.claimFailures.delete(runId);
  state.timers.delete(runId);
  state.inboxes.delete(runId);
  state.updates.delete(runId);
  state.payloads.delete(runId);
  deletePromisesOf(state, runId);
  return true;
}

function deleteExpired(
  state: MemoryState,
  olderThanMs: number,
  limit: number,
  tombstoneMs: number,
): string[] {
  const now = state.clock();
  let dropped = 0;
  for (const [runId, tombstone] of state.tombstones) {
    if (dropped >= limit) break;
    if (tombstone.expiresAt > now) continue;
    state.tombstones.delete(runId);
    dropped += 1;
  }
  const deleted: string[] = [];
  for (const runId of expired(state, olderThanMs, limit)) {
    if (!deleteRun(state, runId)) continue;
    state.tombstones.set(runId, { deletedAt: now, expiresAt: now + tombstoneMs });
    deleted.push(runId);
  }
  return deleted;
}

function tombstone(state: MemoryState, runId: string): RunTombstone | undefined {
  const tombstone = state.tombstones.get(runId);
  if (tombstone === undefined || tombstone.expiresAt <= state.clock()) return undefined;
  return { runId, deletedAt: tombstone.deletedAt };
}

/** `store.retention` over the state. */
export const retention: OperationsOf<MemoryState, RetentionStore> = {
  expired,
  delete: deleteRun,
  deleteExpired,
  tombstone,
};
