/**
 * The in-process store's {@link RunControlStore} (`store.control`): cancel requests, told to the
 * owner's watchers, and the owner's closing of them; pause and resume. A paused lease has no
 * owner, no expiry and no timer, and nothing acquires it until control.resume.
 */
import type {
  CancelRequestResult,
  PauseHeldResult,
  PauseRequestResult,
  ResumeResult,
  RunControlStore,
} from '../adapter/contracts/control.js';
import { FINISHED_RUN_STATUSES } from '../adapter/contracts/run-record.js';
import { FencedWriteError } from '../adapter/errors.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import { isKnown, makeAcquirable, pauseLease, setRunStatus, type MemoryState } from './memory-state.js';

function requestCancel(state: MemoryState, runId: string, reason?: string): CancelRequestResult {
  if (!isKnown(state, runId)) return { found: false, wake: false };
  const lease = state.leases.get(runId);
  const closed = lease?.state === 'held' && lease.cancelsClosedAt === lease.epoch;
  const status = state.runs.get(runId)?.status;
  const finished =
    lease?.state === 'finished' || (status !== undefined && FINISHED_RUN_STATUSES.includes(status));
  if (finished || closed) return { found: true, wake: false, tooLate: true };
  if (!state.cancelled.has(runId) && reason !== undefined) state.cancelReasons.set(runId, reason);
  state.cancelled.add(runId);
  // A cancel wins over a pause: the run must run (to its end, cancelled).
  state.pauseRequested.delete(runId);
  state.pauseReasons.delete(runId);
  if (lease?.state === 'held' && lease.owner !== null) tellOwner(state, lease.owner, runId);
  if (lease?.state !== 'suspended' && lease?.state !== 'paused') return { found: true, wake: false };
  if (lease.state === 'paused') setRunStatus(state, runId, 'pending');
  makeAcquirable(state, runId, lease);
  return { found: true, wake: true };
}

/** Tells the owner's watchers after the current operation (a store call never runs their code). */
function tellOwner(state: MemoryState, owner: string, runId: string): void {
  const watchers = state.cancelWatchers.get(owner);
  if (watchers === undefined) return;
  queueMicrotask(() => {
    for (const listener of [...watchers]) {
      try {
        listener(runId);
      } catch {
        // A listener's failure is its own: the others still hear, and the store goes on.
      }
    }
  });
}

function closeCancels(
  state: MemoryState,
  runId: string,
  epoch: number,
): { cancelRequested: boolean; cancelReason?: string } {
  const lease = state.leases.get(runId);
  if (lease === undefined || lease.state !== 'held' || lease.epoch !== epoch) {
    throw new FencedWriteError(runId, epoch, 'control.closeCancels');
  }
  if (state.cancelled.has(runId)) {
    const cancelReason = state.cancelReasons.get(runId);
    return { cancelRequested: true, ...(cancelReason !== undefined && { cancelReason }) };
  }
  lease.cancelsClosedAt = epoch;
  return { cancelRequested: false };
}

export function watchCancels(
  state: MemoryState,
  workerId: string,
  listener: (runId: string) => void,
): () => void {
  let watchers = state.cancelWatchers.get(workerId);
  if (watchers === undefined) state.cancelWatchers.set(workerId, (watchers = new Set()));
  const own = (runId: string): void => listener(runId);
  watchers.add(own);
  return () => {
    watchers.delete(own);
    if (watchers.size === 0 && state.cancelWatchers.get(workerId) === watchers)
      state.cancelWatchers.delete(workerId);
  };
}

/** A live owner holds the lease: it has one and its expiry has not passed. */
function heldByLiveOwner(state: MemoryState, runId: string): boolean {
  const lease = state.leases.get(runId);
  return (
    lease?.state === 'held' &&
    lease.owner !== null &&
    lease.expiresAt !== null &&
    lease.expiresAt > state.clock()
  );
}

function requestPause(state: MemoryState, runId: string, reason?: string): PauseRequestResult {
  if (!isKnown(state, runId)) return { found: false };
  const lease = state.leases.get(runId);
  if (lease?.state === 'finished') return { found: true, state: 'finished' };
  if (lease?.state === 'paused') return { found: true, state: 'paused' };
  if (state.cancelled.has(runId)) return { found: true, state: 'cancel-requested' };
  if (!state.pauseReasons.has(runId) && reason !== undefined) state.pauseReasons.set(runId, reason);
  if (heldByLiveOwner(state, runId)) {
    state.pauseRequested.add(runId);
    return { found: true, state: 'pause-requested' };
  }
  if (lease === undefined) {
    // Created, never claimed: a paused lease of epoch 0, so the first claim takes epoch 1 as usual.
    const fresh = { epoch: 0, owner: null, state: 'paused' as const, expiresAt: null, waitingFor: [] };
    state.leases.set(runId, fresh);
    pauseLease(state, runId, fresh);
  } else pauseLease(state, runId, lease);
  return { found: true, state: 'paused' };
}

function pauseHeld(state: MemoryState, runId: string, epoch: number): PauseHeldResult {
  const lease = state.leases.get(runId);
  if (lease === undefined || lease.state !== 'held' || lease.epoch !== epoch) {
    throw new FencedWriteError(runId, epoch, 'control.pauseHeld');
  }
  if (state.cancelled.has(runId)) return { ok: false, reason: 'cancel-requested' };
  if (!state.pauseRequested.has(runId)) return { ok: false, reason: 'not-requested' };
  pauseLease(state, runId, lease);
  return { ok: true };
}

function resume(state: MemoryState, runId: string): ResumeResult {
  if (!isKnown(state, runId)) return { found: false, resumed: false, wake: false };
  const lease = state.leases.get(runId);
  if (lease?.state === 'paused') {
    makeAcquirable(state, runId, lease);
    state.pauseReasons.delete(runId);
    setRunStatus(state, runId, 'pending');
    return { found: true, resumed: true, wake: true };
  }
  if (lease?.state === 'held' && state.pauseRequested.delete(runId)) {
    state.pauseReasons.delete(runId);
    return { found: true, resumed: true, wake: false };
  }
  return { found: true, resumed: false, wake: false };
}

/** `store.control`'s operations over the state (watchCancels, answered at once, is above). */
export const control: OperationsOf<MemoryState, RunControlStore> = {
  requestCancel,
  closeCancels,
  requestPause,
  pauseHeld,
  resume,
};
