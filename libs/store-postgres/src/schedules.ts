/**
 * ScheduleStore in SQL (`store.schedules`): the `schedules` table (migration 018), one row per schedule. Each
 * operation is one statement, so each is atomic on its own; a write's compare-and-set is its
 * WHERE clause on the revision (a second writer of the same revision waits for the first's row
 * lock, re-reads the row and matches nothing). Stamps and the due scan use the server's clock.
 */
import type {
  CheckedScheduleQuery,
  NewSchedule,
  OperationsOf,
  SchedulePage,
  ScheduleRecord,
  ScheduleWrite,
  StoreAdapter,
} from '@baton/core/adapter';
import type { Db } from './db.js';

interface ScheduleRow {
  schedule_id: string;
  revision: number;
  created_at: number;
  updated_at: number;
  schedule: NewSchedule;
}

const COLUMNS = 'schedule_id, revision, created_at, updated_at, schedule';

const CREATE_SQL = `
INSERT INTO {{schema}}.schedules
  (schedule_id, workflow, paused, next_fire_at, revision, created_at, updated_at, schedule)
SELECT $1, $2, $3, $4, 1, t.now, t.now, $5::json FROM (SELECT {{schema}}.now_ms() AS now) t
ON CONFLICT (schedule_id) DO NOTHING
RETURNING ${COLUMNS}`;

const GET_SQL = `SELECT ${COLUMNS} FROM {{schema}}.schedules WHERE schedule_id = $1`;

const UPDATE_SQL = `
UPDATE {{schema}}.schedules
SET workflow = $3, paused = $4, next_fire_at = $5, schedule = $6::json,
    revision = revision + 1, updated_at = {{schema}}.now_ms()
WHERE schedule_id = $1 AND revision = $2
RETURNING ${COLUMNS}`;

const DELETE_SQL = `
DELETE FROM {{schema}}.schedules
WHERE schedule_id = $1 AND ($2::bigint IS NULL OR revision = $2)
RETURNING ${COLUMNS}`;

const LIST_SQL = `
SELECT ${COLUMNS} FROM {{schema}}.schedules
WHERE ($1::text IS NULL OR schedule_id > $1)
  AND ($2::text IS NULL OR workflow = $2)
  AND ($3::boolean IS NULL OR paused = $3)
ORDER BY schedule_id
LIMIT $4`;

const DUE_SQL = `
WITH t AS (SELECT {{schema}}.now_ms() AS now)
SELECT t.now, d.* FROM t LEFT JOIN LATERAL (
  SELECT ${COLUMNS} FROM {{schema}}.schedules s
  WHERE NOT s.paused AND s.next_fire_at IS NOT NULL AND s.next_fire_at <= t.now
  ORDER BY s.next_fire_at, s.schedule_id
  LIMIT $1
) d ON true`;

function toRecord(row: ScheduleRow): ScheduleRecord {
  return {
    ...row.schedule,
    scheduleId: row.schedule_id,
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

async function create(
  db: Db,
  schedule: NewSchedule,
): Promise<{ created: boolean; schedule: ScheduleRecord }> {
  const [row] = await db.query<ScheduleRow>(CREATE_SQL, [
    schedule.scheduleId,
    schedule.workflow,
    schedule.paused,
    schedule.nextFireAt,
    JSON.stringify(schedule),
  ]);
  if (row !== undefined) return { created: true, schedule: toRecord(row) };
  const known = await get(db, schedule.scheduleId);
  // Deleted between the two statements: try again (rare; the id is free now).
  if (known === undefined) return create(db, schedule);
  return { created: false, schedule: known };
}

async function get(db: Db, scheduleId: string): Promise<ScheduleRecord | undefined> {
  const [row] = await db.query<ScheduleRow>(GET_SQL, [scheduleId]);
  return row === undefined ? undefined : toRecord(row);
}

/** The answer of a write that matched no row: the schedule is gone, or at another revision. */
async function refused(db: Db, scheduleId: string): Promise<ScheduleWrite> {
  const known = await get(db, scheduleId);
  return known === undefined
    ? { ok: false, reason: 'not-found' }
    : { ok: false, reason: 'conflict', schedule: known };
}

async function update(
  db: Db,
  scheduleId: string,
  expectedRevision: number,
  next: Omit<NewSchedule, 'scheduleId'>,
): Promise<ScheduleWrite> {
  if (!Number.isInteger(expectedRevision)) return refused(db, scheduleId);
  const [row] = await db.query<ScheduleRow>(UPDATE_SQL, [
    scheduleId,
    expectedRevision,
    next.workflow,
    next.paused,
    next.nextFireAt,
    JSON.stringify({ ...next, scheduleId }),
  ]);
  return row === undefined ? refused(db, scheduleId) : { ok: true, schedule: toRecord(row) };
}

async function deleteSchedule(db: Db, scheduleId: string, expectedRevision?: number): Promise<ScheduleWrite> {
  const [row] = await db.query<ScheduleRow>(DELETE_SQL, [scheduleId, expectedRevision ?? null]);
  return row === undefined ? refused(db, scheduleId) : { ok: true, schedule: toRecord(row) };
}

async function list(
  db: Db,
  { limit, cursor, workflow, paused }: CheckedScheduleQuery,
): Promise<SchedulePage> {
  const rows = await db.query<ScheduleRow>(LIST_SQL, [
    cursor ?? null,
    workflow ?? null,
    paused ?? null,
    limit + 1,
  ]);
  const schedules = rows.slice(0, limit).map(toRecord);
  return rows.length > limit ? { schedules, cursor: schedules.at(-1)!.scheduleId } : { schedules };
}

async function due(db: Db, limit: number): Promise<{ now: number; schedules: ScheduleRecord[] }> {
  const rows = await db.query<ScheduleRow & { now: number }>(DUE_SQL, [limit]);
  const now = rows[0]!.now;
  return { now, schedules: rows.filter((row) => row.schedule_id !== null).map(toRecord) };
}

/** `store.schedules` over the pool. */
export const schedules: OperationsOf<Db, StoreAdapter['schedules']> = {
  create,
  get,
  update,
  delete: deleteSchedule,
  list,
  due,
};
