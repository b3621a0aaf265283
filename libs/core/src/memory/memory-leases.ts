/**
 * The in-process store's {@link LeaseStore} (`store.leases`): leases with fencing epochs,
 * suspension, reaping, claim failures.
 */
import type {
  AcquireResult,
  LeaseInfo,
  LeaseStore,
  RenewRequest,
  RenewResult,
  SuspendRequest,
  SuspendResult,
} from '../adapter/contracts/leases.js';
import { FencedWriteError } from '../adapter/errors.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import type { LeaseRecord } from './memory-records.js';
import { assertFence, makeAcquirable, pauseLease, setRunStatus, type MemoryState } from './memory-state.js';

export function acquire(state: MemoryState, runId: string, owner: string, ttlMs: number): AcquireResult {
  const now = state.clock();
  const lease = state.leases.get(runId);
  if (lease?.state === 'finished') return { ok: false, reason: 'finished' };
  if (lease?.state === 'paused') return { ok: false, reason: 'paused' };
  // An ownerless lease (reaped or handed off) is free even though the reaper moved its expiry on.
  if (lease?.state === 'held' && lease.owner !== null && lease.expiresAt !== null && lease.expiresAt > now) {
    return { ok: false, reason: 'held', owner: lease.owner, expiresAt: lease.expiresAt };
  }
  // Free, but its owner was asked to pause and died (or handed it off) before it stopped.
  if (lease !== undefined && state.pauseRequested.has(runId)) {
    pauseLease(state, runId, lease);
    return { ok: false, reason: 'paused' };
  }
  const epoch = (lease?.epoch ?? 0) + 1;
  state.leases.set(runId, { epoch, owner, state: 'held', expiresAt: now + ttlMs, waitingFor: [] });
  state.timers.delete(runId);
  const run = state.runs.get(runId);
  if (run !== undefined) {
    run.status = 'running';
    run.attempts += 1;
    run.updatedAt = now;
  }
  return { ok: true, epoch, cancelRequested: state.cancelled.has(runId) };
}

function renew(state: MemoryState, requests: readonly RenewRequest[], ttlMs: number): RenewResult[] {
  const now = state.clock();
  return requests.map(({ runId, epoch }) => {
    const lease = state.leases.get(runId);
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
    return {
      runId,
      ok,
      cancelRequested: state.cancelled.has(runId),
      ...(state.pauseRequested.has(runId) && { pauseRequested: true }),
    };
  });
}

function release(state: MemoryState, runId: string, epoch: number): boolean {
  const lease = state.leases.get(runId);
  if (lease === undefined || lease.state !== 'held' || lease.epoch !== epoch) return false;
  makeAcquirable(state, runId, lease);
  return true;
}

function reapExpired(state: MemoryState, limit: number, reclaimAfterMs: number): string[] {
  const now = state.clock();
  const expired: [string, LeaseRecord][] = [];
  for (const entry of state.leases) {
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

function recordClaimFailure(state: MemoryState, runId: string, epoch: number): number {
  assertFence(state, runId, epoch, 'leases.recordClaimFailure');
  const last = state.claimFailures.get(runId);
  if (last?.epoch === epoch) return last.count;
  const count = last?.epoch === epoch - 1 ? last.count + 1 : 1;
  state.claimFailures.set(runId, { epoch, count });
  return count;
}

function get(state: MemoryState, runId: string): LeaseInfo | undefined {
  const lease = state.leases.get(runId);
  if (lease === undefined) return undefined;
  // A request is only news while the run is held; a run that finished first keeps none.
  const pauseAsked = lease.state === 'held' && state.pauseRequested.has(runId);
  return {
    runId,
    epoch: lease.epoch,
    owner: lease.owner,
    state: lease.state,
    expiresAt: lease.state === 'held' ? lease.expiresAt : null,
    cancelRequested: state.cancelled.has(runId),
    ...(state.cancelReasons.has(runId) && { cancelReason: state.cancelReasons.get(runId) }),
    ...(pauseAsked && { pauseRequested: true }),
    ...((pauseAsked || lease.state === 'paused') &&
      state.pauseReasons.has(runId) && { pauseReason: state.pauseReasons.get(runId) }),
    ...(lease.state === 'suspended' && {
      waitingFor: { signals: [...lease.waitingFor], wakeAt: state.timers.get(runId) ?? null },
    }),
  };
}

function suspend(state: MemoryState, request: SuspendRequest): SuspendResult {
  const { runId, epoch } = request;
  const lease = state.leases.get(runId);
  if (lease === undefined || lease.state !== 'held' || lease.epoch !== epoch) {
    throw new FencedWriteError(runId, epoch, 'leases.suspend');
  }
  const consumed = new Set(request.consumedSignalIds);
  const pending = (state.inboxes.get(runId) ?? []).some(
    (s) => request.signals.includes(s.name) && !consumed.has(s.signalId),
  );
  if (pending) return { ok: false, reason: 'signal-pending' };
  if (state.cancelled.has(runId)) return { ok: false, reason: 'cancel-requested' };
  // Asked to pause while it ran to this suspension point: pause instead (the timer goes too).
  if (state.pauseRequested.has(runId)) {
    pauseLease(state, runId, lease);
    return { ok: true, paused: true };
  }
  lease.state = 'suspended';
  lease.owner = null;
  lease.expiresAt = null;
  lease.waitingFor = [...request.signals];
  if (request.wakeAt === null) state.timers.delete(runId);
  else state.timers.set(runId, request.wakeAt);
  setRunStatus(state, runId, 'suspended');
  return { ok: true };
}

/** `store.leases` over the state. */
export const leases: OperationsOf<MemoryState, LeaseStore> = {
  acquire,
  renew,
  release,
  suspend,
  reapExpired,
  get,
  now: (state) => state.clock(),
  recordClaimFailure,
};
