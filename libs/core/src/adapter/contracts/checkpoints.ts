/**
 * Checkpoints (`store.checkpoints`, {@link CheckpointStore}): fenced snapshots of a run with their
 * history, the replay cache a resume starts from. Part of the store contract (store.ts).
 */
import type { JournalEntry } from '../../shared/journal.js';

export interface Checkpoint {
  runId: string;
  /** Monotonic per run, assigned by the writer (1, 2, …). */
  seq: number;
  /** Epoch of the writer. */
  epoch: number;
  /** Last journal position the snapshot covers; a resume reads the journal after it. */
  journalPosition: number;
  /** The effective (fenced-filtered) journal entries up to `journalPosition`: the replay cache. */
  entries: JournalEntry[];
  status: 'running' | 'suspended' | 'completed' | 'failed' | 'cancelled';
  /** Version of this record's layout, for migrations on load. */
  schemaVersion: number;
  createdAt: number;
}

export interface CheckpointSummary {
  seq: number;
  epoch: number;
  journalPosition: number;
  status: Checkpoint['status'];
  schemaVersion: number;
  createdAt: number;
  /** Encoded size in bytes. */
  size: number;
}

export interface CheckpointStore {
  /** Stores a checkpoint only while `checkpoint.epoch` is the lease's epoch; else FencedWriteError. */
  write(checkpoint: Checkpoint): Promise<void>;
  /**
   * The newest checkpoint, or undefined; with `seq`, the kept checkpoint of that sequence number
   * (the newest one, should a run hold two with the same seq), or undefined.
   */
  load(runId: string, seq?: number): Promise<Checkpoint | undefined>;
  /** Every kept checkpoint of the run, oldest first. */
  list(runId: string): Promise<CheckpointSummary[]>;
}
