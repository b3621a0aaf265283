/**
 * What the in-process store keeps per run beyond the contract's own records, and what follows
 * from them.
 */
import type { Checkpoint, CheckpointSummary } from '../adapter/contracts/checkpoints.js';
import type { LeaseState } from '../adapter/contracts/leases.js';
import type { RunRecord } from '../adapter/contracts/run-record.js';
import { FINISHED_RUN_STATUSES } from '../adapter/contracts/run-record.js';

export interface LeaseRecord {
  epoch: number;
  owner: string | null;
  state: LeaseState;
  expiresAt: number | null;
  /** Signal names the suspended run waits for; a signal with one of them wakes it. */
  waitingFor: string[];
  /** The epoch whose owner closed the run's cancels before journaling its end (closeCancels). */
  cancelsClosedAt?: number;
}

export interface StoredCheckpoint {
  checkpoint: Checkpoint;
  size: number;
  /**
   * Kept apart from the body, as Redis and Postgres keep it, so a damaged body (a test's stand-in
   * for a disk fault) still lists under its seq.
   */
  summary: CheckpointSummary;
}

/** The last failed claim of a run and how many claims in a row failed up to it. */
export interface ClaimFailures {
  epoch: number;
  count: number;
}

/** The status that keeps a run from deletion, or undefined when it is finished. */
export function unfinishedStatus(
  run: RunRecord | undefined,
  lease: LeaseRecord | undefined,
): string | undefined {
  if (run !== undefined && !FINISHED_RUN_STATUSES.includes(run.status)) return run.status;
  if (lease !== undefined && lease.state !== 'finished')
    return lease.state === 'held' ? 'running' : lease.state;
  return undefined;
}
