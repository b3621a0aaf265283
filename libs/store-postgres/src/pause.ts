/**
 * Pause and resume in SQL (RunControlStore.requestPause, pauseHeld, resume): one function call
 * each (migration 012), which locks the lease row first as every other lease change does.
 */

import { FencedWriteError } from '@baton/core/adapter';
import type { PauseHeldResult, PauseRequestResult, ResumeResult } from '@baton/core/adapter';
import type { Db } from './db.js';

export async function requestPause(db: Db, runId: string, reason?: string): Promise<PauseRequestResult> {
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

export async function pauseHeldRun(db: Db, runId: string, epoch: number): Promise<PauseHeldResult> {
  const [row] = await db.query<{ outcome: string }>('SELECT {{schema}}.pause_held_run($1, $2) AS outcome', [
    runId,
    epoch,
  ]);
  if (row?.outcome === 'paused') return { ok: true };
  if (row?.outcome === 'cancel-requested' || row?.outcome === 'not-requested')
    return { ok: false, reason: row.outcome };
  throw new FencedWriteError(runId, epoch, 'pause');
}

export async function resumeRun(db: Db, runId: string): Promise<ResumeResult> {
  const [row] = await db.query<{ outcome: string }>('SELECT {{schema}}.resume_run($1) AS outcome', [runId]);
  const outcome = row?.outcome;
  return {
    found: outcome !== 'unknown',
    resumed: outcome === 'resumed' || outcome === 'withdrawn',
    wake: outcome === 'resumed',
  };
}
