/**
 * The in-process store's waiting runs: the {@link TimerStore} (`store.timers`) and the
 * {@link SignalInbox} (`store.signals`), what wakes a suspended run; suspension is leases.suspend
 * (memory-leases.ts), a cancel control.requestCancel (memory-control.ts).
 */
import type { DueTimer, InboxSignal, SignalInbox, TimerStore } from '../adapter/contracts/waits.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import { isKnown, makeAcquirable, type MemoryState } from './memory-state.js';

/** What `signals.deliver` answers (contracts/waits.ts). */
type Delivered = Awaited<ReturnType<SignalInbox['deliver']>>;

function claimDue(state: MemoryState, limit: number, redeliverAfterMs: number): DueTimer[] {
  const now = state.clock();
  const due: DueTimer[] = [];
  for (const [runId, dueAt] of state.timers) if (dueAt <= now) due.push({ runId, dueAt });
  due.sort((a, b) => a.dueAt - b.dueAt);
  const claimed = due.slice(0, Math.max(0, limit));
  for (const timer of claimed) state.timers.set(timer.runId, now + redeliverAfterMs);
  return claimed;
}

function deliver(state: MemoryState, runId: string, signal: Omit<InboxSignal, 'receivedAt'>): Delivered {
  if (!isKnown(state, runId)) return { found: false, wake: false };
  const inbox = state.inboxes.get(runId) ?? [];
  const finished = state.leases.get(runId)?.state === 'finished';
  const continuedAs = state.runs.get(runId)?.continuedAs;
  // A run that continued as new keeps nothing: a repeat stays a repeat, the rest go to its successor.
  if (continuedAs !== undefined) {
    if (inbox.some((s) => s.signalId === signal.signalId)) return { found: true, wake: false };
    return { found: true, wake: false, continuedAs, ...(finished && { dropped: true }) };
  }
  // Nothing reads a finished run's inbox: keep nothing, say so.
  if (finished) return { found: true, wake: false, dropped: true };
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

function read(state: MemoryState, runId: string): InboxSignal[] {
  return structuredClone(state.inboxes.get(runId) ?? []);
}

/** `store.signals` over the state. */
export const signals: OperationsOf<MemoryState, SignalInbox> = { deliver, read };

/** `store.timers` over the state. */
export const timers: OperationsOf<MemoryState, TimerStore> = { claimDue };
