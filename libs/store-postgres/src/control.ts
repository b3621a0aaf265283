/**
 * RunControlStore in SQL (`store.control`): cancel requests and the owner's closing of them
 * (migration 022), pause and resume (migration 012); one function call each, which locks the lease
 * row first as every other lease change does (waits.ts, invariant 1).
 */

import { FencedWriteError } from '@baton/core/adapter';
import type {
  CancelRequestResult,
  OperationsOf,
  PauseHeldResult,
  PauseRequestResult,
  ResumeResult,
  RunControlStore,
} from '@baton/core/adapter';
import type { Db } from './db.js';

async function requestCancel(
  db: Db,
  runId: string,
  reason: string | undefined,
  channel: string,
): Promise<CancelRequestResult> {
  const [row] = await db.query<{ run_found: boolean; wake_run: boolean; too_late: boolean }>(
    'SELECT * FROM {{schema}}.request_cancel($1, $2::text, $3::text)',
    [runId, reason ?? null, channel],
  );
  return {
    found: row?.run_found ?? false,
    wake: row?.wake_run ?? false,
    ...(row?.too_late === true && { tooLate: true }),
  };
}

/** close_cancels() for one run; batch.ts sends many in one statement. */
export const CLOSE_CANCELS_SQL = 'SELECT * FROM {{schema}}.close_cancels($1, $2)';

export interface CloseCancelsRow {
  outcome: string;
  cancel_reason: string | null;
}

/** control.closeCancels's answer to close_cancels()'s row. */
export function cancelsClosed(
  runId: string,
  epoch: number,
  row: CloseCancelsRow | undefined,
): { cancelRequested: boolean; cancelReason?: string } {
  if (row?.outcome === 'closed') return { cancelRequested: false };
  if (row?.outcome !== 'cancel-requested') throw new FencedWriteError(runId, epoch, 'control.closeCancels');
  return { cancelRequested: true, ...(row.cancel_reason !== null && { cancelReason: row.cancel_reason }) };
}

/** The single-call path; the store sends its calls through its batches (batch.ts). */
async function closeCancels(
  db: Db,
  runId: string,
  epoch: number,
): Promise<{ cancelRequested: boolean; cancelReason?: string }> {
  const [row] = await db.query<CloseCancelsRow>(CLOSE_CANCELS_SQL, [runId, epoch]);
  return cancelsClosed(runId, epoch, row);
}

async function requestPause(db: Db, runId: string, reason?: string): Promise<PauseRequestResult> {
  const [row] = await db.query<{ outcome: string }>(
    'SELECT {{schema}}.request_pause($1, $2::text) AS outcome',
    [runId, reason ?? null],
  );
  switch (row?.outcome) {
    case 'paused':
    case 'pause-requested':
    case 'finished':
    case 'cancel-requested':
      return { found: true, state: row.outcome };
    case 'unknown':
      return { found: false };
    default:
      throw new Error(`request_pause answered ${String(row?.outcome)} for run ${runId}`);
  }
}

async function pauseHeld(db: Db, runId: string, epoch: number): Promise<PauseHeldResult> {
  const [row] = await db.query<{ outcome: string }>('SELECT {{schema}}.pause_held_run($1, $2) AS outcome', [
    runId,
    epoch,
  ]);
  if (row?.outcome === 'paused') return { ok: true };
  if (row?.outcome === 'cancel-requested' || row?.outcome === 'not-requested')
    return { ok: false, reason: row.outcome };
  throw new FencedWriteError(runId, epoch, 'control.pauseHeld');
}

async function resume(db: Db, runId: string): Promise<ResumeResult> {
  const [row] = await db.query<{ outcome: string }>('SELECT {{schema}}.resume_run($1) AS outcome', [runId]);
  const outcome = row?.outcome;
  return {
    found: outcome !== 'unknown',
    resumed: outcome === 'resumed' || outcome === 'withdrawn',
    wake: outcome === 'resumed',
  };
}

/**
 * `store.control`'s operations over the pool; an accepted cancel is told to its owner on
 * `cancels`, the channel its presence session listens on (presence.ts). watchCancels, a
 * subscription, is the store's.
 */
export function controlOperations(cancels: string): OperationsOf<Db, RunControlStore> {
  return {
    requestCancel: (db, runId, reason) => requestCancel(db, runId, reason, cancels),
    closeCancels,
    requestPause,
    pauseHeld,
    resume,
  };
}
