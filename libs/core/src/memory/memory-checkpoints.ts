/** The in-process store's {@link CheckpointStore} part: fenced snapshots with their history. */
import type { Checkpoint, CheckpointSummary } from '../adapter/contracts/store.js';
import { checkStoredCheckpoint } from '../adapter/checkpoint-record.js';
import { assertFence, keepCheckpoint, type MemoryState } from './memory-state.js';

export function writeCheckpoint(state: MemoryState, checkpoint: Checkpoint): void {
  assertFence(state, checkpoint.runId, checkpoint.epoch, 'checkpoint write');
  keepCheckpoint(state, checkpoint);
}

export function loadCheckpoint(state: MemoryState, runId: string, seq?: number): Checkpoint | undefined {
  const history = state.checkpoints.get(runId) ?? [];
  const found = seq === undefined ? history.at(-1) : history.findLast((c) => c.summary.seq === seq);
  if (found === undefined) return undefined;
  return checkStoredCheckpoint(structuredClone(found.checkpoint), runId, found.summary.seq);
}

export function listCheckpoints(state: MemoryState, runId: string): CheckpointSummary[] {
  return (state.checkpoints.get(runId) ?? []).map(({ summary }) => ({ ...summary }));
}

/** For tests: replaces a checkpoint's body, keeping its summary (see damageMemoryCheckpoint). */
export function damageCheckpoint(state: MemoryState, runId: string, seq: number, stored: unknown): boolean {
  const found = state.checkpoints.get(runId)?.findLast((c) => c.summary.seq === seq);
  if (found === undefined) return false;
  found.checkpoint = stored as Checkpoint;
  return true;
}
