/**
 * RetentionStore in SQL (`store.retention`): finished runs by finish time (index runs_finished_by_update, migration
 * 005), the atomic delete of a finished run (delete_run()), and the sweep's batch with its
 * tombstones (delete_expired_runs(), migration 009).
 */
import { refuseDelete, type OperationsOf, type RetentionStore, type RunTombstone } from '@baton/core/adapter';
import type { Db } from './db.js';

const EXPIRED_SQL = `
SELECT r.run_id FROM {{schema}}.runs r
WHERE r.status IN ('completed', 'failed', 'cancelled') AND r.updated_at <= {{schema}}.now_ms() - $1
ORDER BY r.updated_at
LIMIT $2`;

async function expired(db: Db, olderThanMs: number, limit: number): Promise<string[]> {
  if (limit <= 0) return [];
  const rows = await db.query<{ run_id: string }>(EXPIRED_SQL, [olderThanMs, limit]);
  return rows.map((row) => row.run_id);
}

const DELETE_SQL = `SELECT {{schema}}.delete_run($1) AS outcome`;

async function deleteRun(db: Db, runId: string): Promise<boolean> {
  const [row] = await db.query<{ outcome: string }>(DELETE_SQL, [runId]);
  const outcome = row?.outcome ?? 'unknown';
  if (outcome === 'deleted') return true;
  if (outcome === 'unknown') return false;
  throw refuseDelete(runId, outcome);
}

const DELETE_EXPIRED_SQL = `SELECT run_id FROM {{schema}}.delete_expired_runs($1, $2, $3) AS run_id`;

async function deleteExpired(
  db: Db,
  olderThanMs: number,
  limit: number,
  tombstoneMs: number,
): Promise<string[]> {
  if (limit <= 0) return [];
  const rows = await db.query<{ run_id: string }>(DELETE_EXPIRED_SQL, [olderThanMs, limit, tombstoneMs]);
  return rows.map((row) => row.run_id);
}

const TOMBSTONE_SQL = `
SELECT deleted_at::text AS deleted_at FROM {{schema}}.run_tombstones
WHERE run_id = $1 AND expires_at > {{schema}}.now_ms()`;

async function tombstone(db: Db, runId: string): Promise<RunTombstone | undefined> {
  const [row] = await db.query<{ deleted_at: string }>(TOMBSTONE_SQL, [runId]);
  return row === undefined ? undefined : { runId, deletedAt: Number(row.deleted_at) };
}

/** `store.retention` over the pool. */
export const retention: OperationsOf<Db, RetentionStore> = {
  expired,
  delete: deleteRun,
  deleteExpired,
  tombstone,
};
