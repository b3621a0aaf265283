/**
 * The in-process store's pause and resume (RunControlStore.requestPause, pauseHeld, resume):
 * a paused lease has no owner, no expiry and no timer, and nothing acquires it until control.resume.
 */
import type { PauseHeldResult, PauseRequestResult, ResumeResult } from '../adapter/contracts/store.js';
import { FencedWriteError } from '../adapter/errors.js';
import { isKnown, makeAcquirable, pauseLease, setRunStatus, type MemoryState } from './memory-state.js';

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

export function requestPause(state: MemoryState, runId: string, reason?: string): PauseRequestResult {
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

export function pauseHeldRun(state: MemoryState, runId: string, epoch: number): PauseHeldResult {
  const lease = state.leases.get(runId);
  if (lease === undefined || lease.state !== 'held' || lease.epoch !== epoch) {
    throw new FencedWriteError(runId, epoch, 'pause');
  }
  if (state.cancelled.has(runId)) return { ok: false, reason: 'cancel-requested' };
  if (!state.pauseRequested.has(runId)) return { ok: false, reason: 'not-requested' };
  pauseLease(state, runId, lease);
  return { ok: true };
}

export function resumeRun(state: MemoryState, runId: string): ResumeResult {
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
