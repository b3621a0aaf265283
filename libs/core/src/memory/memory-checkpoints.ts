/** The in-process store's {@link CheckpointStore} (`store.checkpoints`): fenced snapshots with their history. */
import type { Checkpoint, CheckpointStore, CheckpointSummary } from '../adapter/contracts/checkpoints.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import { checkStoredCheckpoint } from '../adapter/checkpoint-record.js';
import { assertFence, keepCheckpoint, type MemoryState } from './memory-state.js';

function write(state: MemoryState, checkpoint: Checkpoint): void {
  assertFence(state, checkpoint.runId, checkpoint.epoch, 'checkpoints.write');
  keepCheckpoint(state, checkpoint);
}

function load(state: MemoryState, runId: string, seq?: number): Checkpoint | undefined {
  const history = state.checkpoints.get(runId) ?? [];
  const found = seq === undefined ? history.at(-1) : history.findLast((c) => c.summary.seq === seq);
  if (found === undefined) return undefined;
  return checkStoredCheckpoint(structuredClone(found.checkpoint), runId, found.summary.seq);
}

function list(state: MemoryState, runId: string): CheckpointSummary[] {
  return (state.checkpoints.get(runId) ?? []).map(({ summary }) => ({ ...summary }));
}

/** For tests: replaces a checkpoint's body, keeping its summary (see damageMemoryCheckpoint). */
/** `store.checkpoints` over the state. */
export const checkpoints: OperationsOf<MemoryState, CheckpointStore> = { write, load, list };

export function damageCheckpoint(state: MemoryState, runId: string, seq: number, stored: unknown): boolean {
  const found = state.checkpoints.get(runId)?.findLast((c) => c.summary.seq === seq);
  if (found === undefined) return false;
  found.checkpoint = stored as Checkpoint;
  return true;
}
