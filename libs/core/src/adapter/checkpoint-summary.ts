import type { Checkpoint, CheckpointSummary } from './contracts/checkpoints.js';

/** What `checkpoints.list` reports of a stored checkpoint whose encoding took `size` bytes. */
export function summarizeCheckpoint(checkpoint: Checkpoint, size: number): CheckpointSummary {
  return {
    seq: checkpoint.seq,
    epoch: checkpoint.epoch,
    journalPosition: checkpoint.journalPosition,
    status: checkpoint.status,
    schemaVersion: checkpoint.schemaVersion,
    createdAt: checkpoint.createdAt,
    size,
  };
}
