/**
 * PromiseStore on Postgres (`store.promises`; contracts/promises.ts in @baton/core; migration 024):
 * a row per promise. A completion is one function call (complete_promise), which records it and
 * writes the run's inbox in one transaction under the run's lease row lock, as deliver_signal
 * does; the run's deletion deletes its promises (the migration's triggers).
 */
import type { OperationsOf, PromiseCompleteResult, PromiseRecord, PromiseStore } from '@baton/core/adapter';
import { fromJson, toJson, type Db } from './db.js';

const CREATE_SQL = `
INSERT INTO {{schema}}.promises (token, run_id, seq, state, schema, timeout_at, created_at)
VALUES ($1, $2, $3, 'pending', $4::json, $5, {{schema}}.now_ms())
ON CONFLICT (token) DO NOTHING`;

async function create(db: Db, promise: Parameters<PromiseStore['create']>[0]): Promise<void> {
  await db.query(CREATE_SQL, [
    promise.token,
    promise.runId,
    promise.seq,
    promise.schema === undefined ? null : JSON.stringify(promise.schema),
    promise.timeoutAt,
  ]);
}

async function complete(
  db: Db,
  token: string,
  completion: { outcome: 'resolved' | 'rejected'; payload: unknown },
): Promise<PromiseCompleteResult> {
  const [row] = await db.query<{
    promise_found: boolean;
    completed: boolean;
    run_finished: boolean;
    promise_run_id: string | null;
    wake_run: boolean;
    continued_as: string | null;
  }>('SELECT * FROM {{schema}}.complete_promise($1, $2, $3::json)', [
    token,
    completion.outcome,
    toJson(completion.payload ?? null, 'payload of a durable promise'),
  ]);
  if (row?.promise_found !== true) return { found: false };
  if (row.completed) return { found: true, completed: true, runId: row.promise_run_id!, wake: row.wake_run };
  // Not pending, or its run finished: the record as it is now (a row leaves only with its run).
  const record = await get(db, token);
  if (record === undefined) return { found: false };
  if (row.continued_as !== null) {
    return { found: true, completed: false, record, runFinished: true, continuedAs: row.continued_as };
  }
  return row.run_finished
    ? { found: true, completed: false, record, runFinished: true }
    : { found: true, completed: false, record };
}

const COLUMNS = `token, run_id, seq, state, schema::text AS schema, timeout_at, created_at, completed_at,
  payload::text AS payload`;

const EXPIRE_SQL = `
WITH expired AS (
  UPDATE {{schema}}.promises SET state = 'timed-out', completed_at = {{schema}}.now_ms()
  WHERE token = $1 AND state = 'pending'
  RETURNING ${COLUMNS}
)
SELECT * FROM expired
UNION ALL
SELECT ${COLUMNS} FROM {{schema}}.promises WHERE token = $1 AND NOT EXISTS (SELECT 1 FROM expired)`;

interface PromiseRow {
  token: string;
  run_id: string;
  seq: number;
  state: PromiseRecord['state'];
  schema: string | null;
  timeout_at: string | number | null;
  created_at: string | number;
  completed_at: string | number | null;
  payload: string | null;
}

async function expire(db: Db, token: string): Promise<PromiseRecord | undefined> {
  const [row] = await db.query<PromiseRow>(EXPIRE_SQL, [token]);
  return row === undefined ? undefined : decodePromise(row);
}

async function get(db: Db, token: string): Promise<PromiseRecord | undefined> {
  const [row] = await db.query<PromiseRow>(`SELECT ${COLUMNS} FROM {{schema}}.promises WHERE token = $1`, [
    token,
  ]);
  return row === undefined ? undefined : decodePromise(row);
}

async function forRun(db: Db, runId: string): Promise<PromiseRecord[]> {
  const rows = await db.query<PromiseRow>(
    `SELECT ${COLUMNS} FROM {{schema}}.promises WHERE run_id = $1 ORDER BY seq`,
    [runId],
  );
  return rows.map(decodePromise);
}

function decodePromise(row: PromiseRow): PromiseRecord {
  const record: PromiseRecord = {
    token: row.token,
    runId: row.run_id,
    seq: Number(row.seq),
    state: row.state,
    timeoutAt: row.timeout_at === null ? null : Number(row.timeout_at),
    createdAt: Number(row.created_at),
  };
  if (row.schema !== null) record.schema = fromJson(row.schema) as Record<string, unknown>;
  if (row.completed_at !== null) record.completedAt = Number(row.completed_at);
  if (row.payload !== null) record.payload = fromJson(row.payload);
  return record;
}

/** `store.promises` over the pool. */
export const promises: OperationsOf<Db, PromiseStore> = { create, complete, expire, get, forRun };
