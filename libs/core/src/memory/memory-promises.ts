/**
 * Durable promises (`store.promises`, contracts/promises.ts) in the in-process store: records by
 * token, each completion delivered to its run's inbox in the same call, exactly as `signals.deliver`
 * delivers (memory-waits.ts), so it is as atomic as the real stores' one script or transaction.
 */
import {
  PROMISE_SIGNAL,
  promiseSignalId,
  type PromiseCompleteResult,
  type PromiseRecord,
  type PromiseStore,
} from '../adapter/contracts/promises.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import { makeAcquirable, type MemoryState } from './memory-state.js';

function create(state: MemoryState, promise: Parameters<PromiseStore['create']>[0]): void {
  if (state.promises.has(promise.token)) return;
  state.promises.set(promise.token, {
    token: promise.token,
    runId: promise.runId,
    seq: promise.seq,
    state: 'pending',
    ...(promise.schema !== undefined && { schema: structuredClone(promise.schema) }),
    timeoutAt: promise.timeoutAt,
    createdAt: state.clock(),
  });
}

function complete(
  state: MemoryState,
  token: string,
  completion: { outcome: 'resolved' | 'rejected'; payload: unknown },
): PromiseCompleteResult {
  const record = state.promises.get(token);
  if (record === undefined) return { found: false };
  if (record.state !== 'pending') return { found: true, completed: false, record: structuredClone(record) };
  const lease = state.leases.get(record.runId);
  const continuedAs = state.runs.get(record.runId)?.continuedAs;
  if (continuedAs !== undefined) {
    return { found: true, completed: false, record: structuredClone(record), runFinished: true, continuedAs };
  }
  if (lease?.state === 'finished') {
    return { found: true, completed: false, record: structuredClone(record), runFinished: true };
  }
  const now = state.clock();
  record.state = completion.outcome;
  record.completedAt = now;
  record.payload = structuredClone(completion.payload);
  const signalId = promiseSignalId(record.seq);
  const inbox = state.inboxes.get(record.runId) ?? [];
  if (!inbox.some((s) => s.signalId === signalId)) {
    inbox.push({
      signalId,
      name: PROMISE_SIGNAL,
      payload: structuredClone(completion.payload),
      receivedAt: now,
    });
    state.inboxes.set(record.runId, inbox);
  }
  const wake = lease?.state === 'suspended' && lease.waitingFor.includes(PROMISE_SIGNAL);
  if (wake) makeAcquirable(state, record.runId, lease);
  return { found: true, completed: true, runId: record.runId, wake };
}

function expire(state: MemoryState, token: string): PromiseRecord | undefined {
  const record = state.promises.get(token);
  if (record === undefined) return undefined;
  if (record.state === 'pending') {
    record.state = 'timed-out';
    record.completedAt = state.clock();
  }
  return structuredClone(record);
}

function get(state: MemoryState, token: string): PromiseRecord | undefined {
  const record = state.promises.get(token);
  return record === undefined ? undefined : structuredClone(record);
}

function forRun(state: MemoryState, runId: string): PromiseRecord[] {
  return [...state.promises.values()]
    .filter((record) => record.runId === runId)
    .sort((a, b) => a.seq - b.seq)
    .map((record) => structuredClone(record));
}

/** Drops the run's promises (its retention, memory-retention.ts). */
export function deletePromisesOf(state: MemoryState, runId: string): void {
  for (const [token, record] of state.promises) if (record.runId === runId) state.promises.delete(token);
}

/** `store.promises` over the state. */
export const promises: OperationsOf<MemoryState, PromiseStore> = { create, complete, expire, get, forRun };
