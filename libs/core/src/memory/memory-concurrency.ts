/** Concurrency slots per key (`store.concurrency`, contracts/concurrency.ts) in the in-process store. */
import type {
  ConcurrencyStore,
  SlotAnswer,
  SlotRequest,
  SlotState,
} from '../adapter/contracts/concurrency.js';
import { FINISHED_RUN_STATUSES } from '../adapter/contracts/run-record.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import type { MemoryState } from './memory-state.js';

function slotsOf(state: MemoryState, key: string): SlotState {
  let slots = state.slots.get(key);
  if (!slots) {
    slots = { holders: [], waiting: [] };
    state.slots.set(key, slots);
  }
  return slots;
}

/** Invariants 2 and 3: finished holders go, free slots go to the line's head (timers due now). */
function settle(state: MemoryState, slots: SlotState, limit: number): string[] {
  const live = (runId: string): boolean => {
    const status = state.runs.get(runId)?.status;
    return status !== undefined && !FINISHED_RUN_STATUSES.includes(status);
  };
  slots.holders = slots.holders.filter(live);
  const wake: string[] = [];
  while (slots.holders.length < limit && slots.waiting.length > 0) {
    const next = slots.waiting.shift()!;
    // A run that finished while it waited leaves the line instead, and so does a paused one (it
    // joins the line again when resumed): neither could use the slot.
    if (!live(next) || state.runs.get(next)?.status === 'paused') continue;
    slots.holders.push(next);
    // Timers are kept for suspended leases only (the timer scan's contract).
    if (state.leases.get(next)?.state === 'suspended') state.timers.set(next, state.clock());
    wake.push(next);
  }
  return wake;
}

function acquire(state: MemoryState, request: SlotRequest): SlotAnswer {
  const slots = slotsOf(state, request.key);
  const wake = settle(state, slots, request.limit);
  if (slots.holders.includes(request.runId)) return { acquired: true, wake };
  if (slots.holders.length < request.limit && slots.waiting.length === 0) {
    slots.holders.push(request.runId);
    return { acquired: true, wake };
  }
  if (!slots.waiting.includes(request.runId)) slots.waiting.push(request.runId);
  return { acquired: false, wake };
}

function release(state: MemoryState, request: SlotRequest): string[] {
  const slots = slotsOf(state, request.key);
  slots.holders = slots.holders.filter((runId) => runId !== request.runId);
  slots.waiting = slots.waiting.filter((runId) => runId !== request.runId);
  const wake = settle(state, slots, request.limit);
  if (slots.holders.length === 0 && slots.waiting.length === 0) state.slots.delete(request.key);
  return wake;
}

function slotState(state: MemoryState, key: string): SlotState {
  const slots = state.slots.get(key);
  return { holders: [...(slots?.holders ?? [])], waiting: [...(slots?.waiting ?? [])] };
}

/** `store.concurrency` over the state. */
export const concurrency: OperationsOf<MemoryState, ConcurrencyStore> = {
  acquire,
  release,
  state: slotState,
};
