/**
 * FleetStore in SQL (`store.fleet`): the `worker_reports` table (migration 013), one row per worker, stamped with
 * the server's clock. Each operation is one statement; a listing deletes a bounded number of rows
 * past their expiry (skipping rows another listing is deleting) and returns the others.
 */
import type { FleetStore, OperationsOf, ReportedWorker, WorkerReport } from '@baton/core/adapter';
import type { Db } from './db.js';

/** Stale reports one listing deletes at most; the rest go on later listings. */
const STALE_PER_LISTING = 1_000;

const REPORT_SQL = `
INSERT INTO {{schema}}.worker_reports (worker_id, report, last_seen_at, expires_at)
SELECT $1, $2::json, t.now, t.now + $3::bigint FROM (SELECT {{schema}}.now_ms() AS now) t
ON CONFLICT (worker_id) DO UPDATE
  SET report = excluded.report, last_seen_at = excluded.last_seen_at, expires_at = excluded.expires_at`;

// The DELETE and the SELECT see the same snapshot, so the SELECT filters by expiry itself.
const LIST_SQL = `
WITH t AS (SELECT {{schema}}.now_ms() AS now),
stale AS (
  DELETE FROM {{schema}}.worker_reports
  WHERE worker_id IN (
    SELECT worker_id FROM {{schema}}.worker_reports, t
    WHERE expires_at <= t.now
    LIMIT $1
    FOR UPDATE SKIP LOCKED
  )
)
SELECT w.worker_id, w.report, w.last_seen_at, w.expires_at
FROM {{schema}}.worker_reports w, t
WHERE w.expires_at > t.now`;

const FORGET_SQL = 'DELETE FROM {{schema}}.worker_reports WHERE worker_id = $1';

interface ReportRow {
  worker_id: string;
  report: WorkerReport;
  last_seen_at: number;
  expires_at: number;
}

async function report(db: Db, report: WorkerReport, ttlMs: number): Promise<void> {
  await db.query(REPORT_SQL, [report.workerId, JSON.stringify(report), ttlMs]);
}

async function list(db: Db): Promise<ReportedWorker[]> {
  const rows = await db.query<ReportRow>(LIST_SQL, [STALE_PER_LISTING]);
  return rows
    .map((row) => ({
      ...row.report,
      workerId: row.worker_id,
      lastSeenAt: row.last_seen_at,
      expiresAt: row.expires_at,
    }))
    .sort((a, b) => (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0));
}

async function forget(db: Db, workerId: string): Promise<void> {
  await db.query(FORGET_SQL, [workerId]);
}

/** `store.fleet` over the pool. */
export const fleet: OperationsOf<Db, FleetStore> = { report, list, forget };
