/**
 * RetentionStore in SQL: finished runs by finish time (index runs_finished_by_update, migration
 * 005) and the atomic delete of a finished run (delete_run()).
 */
import { refuseDelete } from '@baton/core';
import type { Db } from './db.js';

const EXPIRED_SQL = `
SELECT r.run_id FROM {{schema}}.runs r
WHERE r.status IN ('completed', 'failed', 'cancelled') AND r.updated_at <= {{schema}}.now_ms() - $1
ORDER BY r.updated_at
LIMIT $2`;

export async function expiredRuns(db: Db, olderThanMs: number, limit: number): Promise<string[]> {
  if (limit <= 0) return [];
  const rows = await db.query<{ run_id: string }>(EXPIRED_SQL, [olderThanMs, limit]);
  return rows.map((row) => row.run_id);
}

const DELETE_SQL = `SELECT {{schema}}.delete_run($1) AS outcome`;

export async function deleteRun(db: Db, runId: string): Promise<boolean> {
  const [row] = await db.query<{ outcome: string }>(DELETE_SQL, [runId]);
  const outcome = row?.outcome ?? 'unknown';
  if (outcome === 'deleted') return true;
  if (outcome === 'unknown') return false;
  throw refuseDelete(runId, outcome);
}
