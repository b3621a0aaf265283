/**
 * FleetStore in SQL (`store.fleet`): the `worker_reports` table (migration 013), one row per worker, stamped with
 * the server's clock, and the `departed_workers` table (migration 027). Each operation is one
 * statement; a listing deletes a bounded number of reports past their expiry (skipping rows
 * another listing is deleting), moves those whose report asked for it to the departed workers,
 * prunes a bounded number of departed workers past their retention, and returns the others.
 */
import type {
  DepartedWorker,
  FleetStore,
  OperationsOf,
  ReportedWorker,
  WorkerReport,
} from '@baton/core/adapter';
import type { Db } from './db.js';

/** Stale reports (and departed workers past retention) one listing deletes at most; the rest go on later listings. */
const STALE_PER_LISTING = 1_000;

const REPORT_SQL = `
WITH t AS (SELECT {{schema}}.now_ms() AS now),
back AS (DELETE FROM {{schema}}.departed_workers WHERE worker_id = $1)
INSERT INTO {{schema}}.worker_reports (worker_id, report, last_seen_at, expires_at, keep_departed_ms)
SELECT $1, $2::json, t.now, t.now + $3::bigint, $4::bigint FROM t
ON CONFLICT (worker_id) DO UPDATE
  SET report = excluded.report, last_seen_at = excluded.last_seen_at, expires_at = excluded.expires_at,
      keep_departed_ms = excluded.keep_departed_ms`;

// Every listing sweeps first: reports past their expiry go (kept as expired departed workers when
// asked), departed workers past their retention go. The statement's SELECT sees the snapshot from
// before these changes, so it filters by time itself and takes the just-moved rows from `moved`.
const SWEEP = `
WITH t AS (SELECT {{schema}}.now_ms() AS now),
stale AS (
  DELETE FROM {{schema}}.worker_reports
  WHERE worker_id IN (
    SELECT worker_id FROM {{schema}}.worker_reports, t
    WHERE expires_at <= t.now
    LIMIT $1
    FOR UPDATE SKIP LOCKED
  )
  RETURNING worker_id, report, last_seen_at, expires_at, keep_departed_ms
),
moved AS (
  INSERT INTO {{schema}}.departed_workers (worker_id, report, last_seen_at, ended, ended_at, kept_until)
  SELECT s.worker_id, s.report, s.last_seen_at, 'expired', s.expires_at, s.expires_at + s.keep_departed_ms
  FROM stale s, t
  WHERE s.keep_departed_ms > 0 AND s.expires_at + s.keep_departed_ms > t.now
  ON CONFLICT (worker_id) DO UPDATE
    SET report = excluded.report, last_seen_at = excluded.last_seen_at, ended = excluded.ended,
        ended_at = excluded.ended_at, kept_until = excluded.kept_until
  RETURNING worker_id, report, last_seen_at, ended, ended_at, kept_until
),
pruned AS (
  DELETE FROM {{schema}}.departed_workers
  WHERE worker_id IN (
    SELECT worker_id FROM {{schema}}.departed_workers, t
    WHERE kept_until <= t.now
    LIMIT $1
    FOR UPDATE SKIP LOCKED
  )
)`;

const LIST_SQL = `${SWEEP}
SELECT w.worker_id, w.report, w.last_seen_at, w.expires_at
FROM {{schema}}.worker_reports w, t
WHERE w.expires_at > t.now`;

const DEPARTED_SQL = `${SWEEP}
SELECT d.worker_id, d.report, d.last_seen_at, d.ended, d.ended_at, d.kept_until
FROM {{schema}}.departed_workers d, t
WHERE d.kept_until > t.now AND d.worker_id NOT IN (SELECT worker_id FROM moved)
UNION ALL
SELECT worker_id, report, last_seen_at, ended, ended_at, kept_until FROM moved`;

const FORGET_SQL = 'DELETE FROM {{schema}}.worker_reports WHERE worker_id = $1';

const DEPART_SQL = `
WITH t AS (SELECT {{schema}}.now_ms() AS now),
gone AS (DELETE FROM {{schema}}.worker_reports WHERE worker_id = $1)
INSERT INTO {{schema}}.departed_workers (worker_id, report, last_seen_at, ended, ended_at, kept_until)
SELECT $1, $2::json, t.now, 'handed-off', t.now, t.now + $3::bigint FROM t WHERE $3::bigint > 0
ON CONFLICT (worker_id) DO UPDATE
  SET report = excluded.report, last_seen_at = excluded.last_seen_at, ended = excluded.ended,
      ended_at = excluded.ended_at, kept_until = excluded.kept_until`;

interface ReportRow {
  worker_id: string;
  report: WorkerReport;
  last_seen_at: number;
  expires_at: number;
}

interface DepartedRow {
  worker_id: string;
  report: WorkerReport;
  last_seen_at: number;
  ended: DepartedWorker['ended'];
  ended_at: number;
  kept_until: number;
}

function byWorkerId(a: { workerId: string }, b: { workerId: string }): number {
  return a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0;
}

async function report(db: Db, report: WorkerReport, ttlMs: number, keepDepartedMs = 0): Promise<void> {
  await db.query(REPORT_SQL, [report.workerId, JSON.stringify(report), ttlMs, keepDepartedMs]);
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
    .sort(byWorkerId);
}

async function forget(db: Db, workerId: string): Promise<void> {
  await db.query(FORGET_SQL, [workerId]);
}

async function depart(db: Db, report: WorkerReport, keepMs: number): Promise<void> {
  await db.query(DEPART_SQL, [report.workerId, JSON.stringify(report), keepMs]);
}

async function departed(db: Db): Promise<DepartedWorker[]> {
  const rows = await db.query<DepartedRow>(DEPARTED_SQL, [STALE_PER_LISTING]);
  return rows
    .map((row) => ({
      ...row.report,
      workerId: row.worker_id,
      lastSeenAt: row.last_seen_at,
      ended: row.ended,
      endedAt: row.ended_at,
      keptUntil: row.kept_until,
    }))
    .sort((a, b) => b.endedAt - a.endedAt || byWorkerId(a, b));
}

/** `store.fleet` over the pool. */
export const fleet: OperationsOf<Db, FleetStore> = { report, list, forget, depart, departed };
