/**
 * The in-process store's {@link UpdateStore} (`store.updates`): each run's update requests in
 * arrival order until settled, and the settled ones' outcomes by id, deleted with the run
 * (memory-retention.ts). See contracts/updates.ts for the invariants.
 */
import type {
  KeptUpdate,
  UpdateRequest,
  UpdateRequestResult,
  UpdateStore,
} from '../adapter/contracts/updates.js';
import { FencedWriteError } from '../adapter/errors.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import { makeAcquirable, type MemoryState } from './memory-state.js';

function updatesOf(
  state: MemoryState,
  runId: string,
): NonNullable<ReturnType<MemoryState['updates']['get']>> {
  let updates = state.updates.get(runId);
  if (updates === undefined) state.updates.set(runId, (updates = { pending: [], kept: new Map() }));
  return updates;
}

function request(
  state: MemoryState,
  runId: string,
  asked: Omit<UpdateRequest, 'requestedAt'>,
): UpdateRequestResult {
  if (!state.runs.has(runId)) return { found: false, wake: false };
  const kept = state.updates.get(runId)?.kept.get(asked.updateId);
  if (kept !== undefined) return { found: true, wake: false, kept: structuredClone(kept) };
  const lease = state.leases.get(runId);
  const continuedAs = state.runs.get(runId)?.continuedAs;
  if (continuedAs !== undefined) {
    return { found: true, wake: false, continuedAs, ...(lease?.state === 'finished' && { finished: true }) };
  }
  if (lease?.state === 'finished') return { found: true, wake: false, finished: true };
  const { pending } = updatesOf(state, runId);
  if (!pending.some((r) => r.updateId === asked.updateId)) {
    pending.push({
      updateId: asked.updateId,
      name: asked.name,
      args: structuredClone(asked.args),
      requestedAt: state.clock(),
    });
  }
  if (lease?.state !== 'suspended') return { found: true, wake: false };
  makeAcquirable(state, runId, lease);
  return { found: true, wake: true };
}

function pending(state: MemoryState, runId: string): UpdateRequest[] {
  return structuredClone(state.updates.get(runId)?.pending ?? []);
}

function waiting(state: MemoryState, runIds: readonly string[]): string[] {
  return [...new Set(runIds)].filter((runId) => (state.updates.get(runId)?.pending.length ?? 0) > 0);
}

function settle(
  state: MemoryState,
  runId: string,
  epoch: number,
  settlement: Omit<KeptUpdate, 'settledAt'>,
): KeptUpdate {
  const lease = state.leases.get(runId);
  if (lease === undefined || lease.state !== 'held' || lease.epoch !== epoch) {
    throw new FencedWriteError(runId, epoch, `settle of update ${settlement.updateId}`);
  }
  const updates = updatesOf(state, runId);
  updates.pending = updates.pending.filter((r) => r.updateId !== settlement.updateId);
  let kept = updates.kept.get(settlement.updateId);
  if (kept === undefined) {
    kept = { ...structuredClone(settlement), settledAt: state.clock() };
    updates.kept.set(settlement.updateId, kept);
  }
  return structuredClone(kept);
}

function outcome(state: MemoryState, runId: string, updateId: string): KeptUpdate | undefined {
  const kept = state.updates.get(runId)?.kept.get(updateId);
  return kept === undefined ? undefined : structuredClone(kept);
}

/** `store.updates` over the state. */
export const updates: OperationsOf<MemoryState, UpdateStore> = { request, pending, waiting, settle, outcome };
