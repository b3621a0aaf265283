/**
 * The in-process store's waiting runs: suspension, cancel requests, the {@link TimerStore} and the
 * {@link SignalInbox} (what wakes a suspended run).
 */
import type {
  CancelRequestResult,
  DueTimer,
  InboxSignal,
  SuspendRequest,
  SuspendResult,
} from '../adapter/contracts/store.js';
import { FINISHED_RUN_STATUSES } from '../adapter/contracts/store.js';
import { FencedWriteError } from '../adapter/errors.js';
import { isKnown, makeAcquirable, pauseLease, setRunStatus, type MemoryState } from './memory-state.js';

export function suspendRun(state: MemoryState, request: SuspendRequest): SuspendResult {
  const { runId, epoch } = request;
  const lease = state.leases.get(runId);
  if (lease === undefined || lease.state !== 'held' || lease.epoch !== epoch) {
    throw new FencedWriteError(runId, epoch, 'suspend');
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

export function requestCancel(state: MemoryState, runId: string, reason?: string): CancelRequestResult {
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

export function closeCancels(
  state: MemoryState,
  runId: string,
  epoch: number,
): { cancelRequested: boolean; cancelReason?: string } {
  const lease = state.leases.get(runId);
  if (lease === undefined || lease.state !== 'held' || lease.epoch !== epoch) {
    throw new FencedWriteError(runId, epoch, 'close cancels');
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

export function claimDueTimers(state: MemoryState, limit: number, redeliverAfterMs: number): DueTimer[] {
  const now = state.clock();
  const due: DueTimer[] = [];
  for (const [runId, dueAt] of state.timers) if (dueAt <= now) due.push({ runId, dueAt });
  due.sort((a, b) => a.dueAt - b.dueAt);
  const claimed = due.slice(0, Math.max(0, limit));
  for (const timer of claimed) state.timers.set(timer.runId, now + redeliverAfterMs);
  return claimed;
}

export function deliverSignal(
  state: MemoryState,
  runId: string,
  signal: Omit<InboxSignal, 'receivedAt'>,
): { found: boolean; wake: boolean; dropped?: boolean } {
  if (!isKnown(state, runId)) return { found: false, wake: false };
  // Nothing reads a finished run's inbox: keep nothing, say so.
  if (state.leases.get(runId)?.state === 'finished') return { found: true, wake: false, dropped: true };
  const inbox = state.inboxes.get(runId) ?? [];
  if (inbox.some((s) => s.signalId === signal.signalId)) return { found: true, wake: false };
  inbox.push({
    signalId: signal.signalId,
    name: signal.name,
    payload: structuredClone(signal.payload),
    receivedAt: state.clock(),
  });
  state.inboxes.set(runId, inbox);
  const lease = state.leases.get(runId);
  if (lease?.state !== 'suspended' || !lease.waitingFor.includes(signal.name)) {
    return { found: true, wake: false };
  }
  makeAcquirable(state, runId, lease);
  return { found: true, wake: true };
}

export function readSignals(state: MemoryState, runId: string): InboxSignal[] {
  return structuredClone(state.inboxes.get(runId) ?? []);
}
