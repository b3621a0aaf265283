/** The in-process store's {@link RunIndex} (`store.runs`, with memory-queries.ts): run records, idempotency keys, outcomes, retries. */
import type { Checkpoint } from '../adapter/contracts/checkpoints.js';
import type {
  CreatedAndLeased,
  NewRun,
  NewRunToLease,
  ReopenResult,
  RunIndex,
  RunOutcome,
} from '../adapter/contracts/run-index.js';
import type { RunRecord } from '../adapter/contracts/run-record.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import { acquire as acquireLease } from './memory-leases.js';
import { assertFence, keepCheckpoint, type MemoryState } from './memory-state.js';

function create(state: MemoryState, run: NewRun): { created: boolean; run: RunRecord } {
  const created = createStoredRun(state, run);
  return { created: created.created, run: structuredClone(created.run) };
}

/** create, answering with the stored record itself: the caller copies it once, when it returns it. */
function createStoredRun(state: MemoryState, run: NewRun): { created: boolean; run: RunRecord } {
  const keyedRunId = run.idempotencyKey === null ? undefined : state.runIdsByKey.get(run.idempotencyKey);
  const existing =
    state.runs.get(run.runId) ?? (keyedRunId === undefined ? undefined : state.runs.get(keyedRunId));
  if (existing !== undefined) return { created: false, run: existing };
  const now = state.clock();
  const record: RunRecord = {
    runId: run.runId,
    workflow: run.workflow,
    version: run.version,
    input: structuredClone(run.input),
    idempotencyKey: run.idempotencyKey,
    status: 'pending',
    createdAt: now,
    updatedAt: now,
    attempts: 0,
    ...(run.traceparent ? { traceparent: run.traceparent } : {}),
    ...(run.forkedFrom ? { forkedFrom: structuredClone(run.forkedFrom) } : {}),
  };
  state.runs.set(run.runId, record);
  if (run.idempotencyKey !== null) state.runIdsByKey.set(run.idempotencyKey, run.runId);
  if (run.checkpoint !== undefined) keepCheckpoint(state, run.checkpoint);
  return { created: true, run: record };
}

function createAndLease(
  state: MemoryState,
  run: NewRunToLease,
  owner: string,
  ttlMs: number,
): CreatedAndLeased {
  // Both steps run without yielding, so nothing can come between them.
  const created = createStoredRun(state, run);
  if (!created.created) return { created: false, run: structuredClone(created.run) };
  const lease = acquireLease(state, run.runId, owner, ttlMs);
  return { created: true, run: structuredClone(created.run), lease };
}

function reopen(state: MemoryState, runId: string, checkpoint: Checkpoint): ReopenResult {
  const run = state.runs.get(runId);
  const lease = state.leases.get(runId);
  if (
    run?.status !== 'failed' ||
    lease === undefined ||
    lease.state !== 'finished' ||
    lease.epoch !== checkpoint.epoch
  ) {
    return { reopened: false, status: run?.status };
  }
  const now = state.clock();
  keepCheckpoint(state, checkpoint);
  state.claimFailures.delete(runId);
  run.status = 'pending';
  delete run.error;
  run.updatedAt = now;
  lease.state = 'held';
  lease.owner = null;
  lease.expiresAt = now;
  lease.waitingFor = [];
  return { reopened: true };
}

function get(state: MemoryState, runId: string): RunRecord | undefined {
  const run = state.runs.get(runId);
  return run === undefined ? undefined : structuredClone(run);
}

function finish(
  state: MemoryState,
  runId: string,
  epoch: number,
  outcome: RunOutcome,
  checkpoint?: Checkpoint,
): void {
  const lease = assertFence(state, runId, epoch, 'runs.finish');
  const copy = structuredClone(outcome);
  const run = state.runs.get(runId);
  if (run !== undefined) {
    run.status = copy.status;
    if (copy.status === 'completed') run.result = copy.result;
    else run.error = copy.error;
    run.updatedAt = state.clock();
  }
  if (checkpoint !== undefined) keepCheckpoint(state, checkpoint);
  lease.state = 'finished';
  lease.owner = null;
  lease.expiresAt = null;
  lease.waitingFor = [];
  state.timers.delete(runId);
  // A pause asked of a run that finished before it stopped for it is moot.
  state.pauseRequested.delete(runId);
  state.pauseReasons.delete(runId);
}

function continueAs(state: MemoryState, runId: string, epoch: number, successorRunId: string): void {
  assertFence(state, runId, epoch, 'runs.continueAs');
  const run = state.runs.get(runId);
  if (run === undefined || run.continuedAs !== undefined) return;
  run.continuedAs = successorRunId;
  run.updatedAt = state.clock();
}

/** `store.runs` over the state, but its queries (memory-queries.ts). */
export const runIndex: OperationsOf<MemoryState, RunIndex> = {
  create,
  createAndLease,
  get,
  finish,
  continueAs,
  reopen,
};
