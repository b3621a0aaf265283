/** What a worker reports about its work, for progress displays, tests and metrics. */
import type { RunMessage } from '@baton/core';

export type WorkerEvent =
  | {
      type: 'run-claimed';
      runId: string;
      epoch: number;
      via: RunMessage['kind'];
      reason?: string;
      since?: number;
    }
  | { type: 'run-completed'; runId: string; epoch: number }
  | { type: 'run-failed'; runId: string; epoch: number; error: string }
  | { type: 'run-cancelled'; runId: string; epoch: number }
  | { type: 'run-suspended'; runId: string; epoch: number }
  | { type: 'run-handed-off'; runId: string; epoch: number }
  | { type: 'run-aborted'; runId: string; epoch: number; reason: string }
  /** The run's data names a key this worker lacks, or a newer checkpoint schema: left intact, retried later. */
  | { type: 'run-held'; runId: string; epoch: number; code: string; reason: string }
  | { type: 'lease-lost'; runId: string; epoch: number }
  | { type: 'activity-heartbeat'; runId: string; seq: number; details: unknown }
  | { type: 'leases-reaped'; runIds: string[]; cause: 'expired' | 'dead-worker' }
  | { type: 'timers-due'; runIds: string[] }
  /** The retention sweep deleted these finished runs (store data and journal). */
  | { type: 'runs-expired'; runIds: string[] }
  | { type: 'dead-lettered'; code: string; reason: string };
