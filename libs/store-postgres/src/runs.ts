/**
 * RunIndex in SQL (`store.runs`, with the queries of queries.ts): run records, idempotency keys,
 * and finishing a run.
 *
 * Invariants:
 * 1. A run id and an idempotency key each name at most one run (primary key, unique index):
 *    concurrent creates of the same id or key insert one row; the others read it back.
 * 2. runs.finish is one call of finish_run(): outcome, final checkpoint, lease `finished` and timer
 *    removal commit together, and only under the lease's current, unfinished epoch.
 * 3. The store sends runs.createAndLease and runs.finish through its batches (batch.ts), which
 *    use the statements, parameters and answers exported here, so a call answers the same alone
 *    or batched; the functions below are the single-call path.
 */

import { FencedWriteError } from '@baton/core/adapter';
import type {
  Checkpoint,
  CreatedAndLeased,
  NewRunToLease,
  NewRun,
  OperationsOf,
  ReopenResult,
  RunIndex,
  RunOutcome,
  RunRecord,
  RunStatus,
} from '@baton/core/adapter';
import { fromJson, toJson, type Db } from './db.js';
import { encodeCheckpoint } from './checkpoints.js';
import { acquireResult, type AcquireRow } from './leases.js';

export interface RunRow {
  run_id: string;
  workflow: string;
  version: number;
  input: string | null;
  idempotency_key: string | null;
  status: RunRecord['status'];
  created_at: number;
  updated_at: number;
  result: string | null;
  error: string | null;
  attempts: number;
  traceparent: string | null;
  forked_from: string | null;
  /** Absent where a function returns the row without it (create_run_and_lease: a new run has none). */
  attributes?: string | null;
  /** Absent where a function returns the row without it (a new run has none). */
  continued_as?: string | null;
}

/** json columns are read as text and parsed here, so SQL NULL (undefined) differs from JSON null. */
export const RUN_COLUMNS = `r.run_id, r.workflow, r.version, r.input::text AS input, r.idempotency_key, r.status,
  r.created_at, r.updated_at, r.result::text AS result, r.error::text AS error, r.attempts, r.traceparent,
  r.forked_from::text AS forked_from, r.attributes::text AS attributes, r.continued_as`;

// ON CONFLICT without a target covers both the run id and the idempotency key. A conflicting
// insert waits for the other transaction, so once this returns nothing the winner is committed.
const CREATE_SQL = `
INSERT INTO {{schema}}.runs AS r
  (run_id, workflow, version, input, idempotency_key, status, created_at, updated_at, attempts, traceparent,
   forked_from)
VALUES ($1, $2, $3, $4::json, $5, 'pending', {{schema}}.now_ms(), {{schema}}.now_ms(), 0, $6, $7::json)
ON CONFLICT DO NOTHING
RETURNING ${RUN_COLUMNS}`;

// A separate statement, so it sees the row the conflicting transaction committed. The run id
// wins over the key, as in the contract's reference store.
const EXISTING_SQL = `
SELECT ${RUN_COLUMNS}
FROM {{schema}}.runs r
WHERE r.run_id = $1 OR ($2::text IS NOT NULL AND r.idempotency_key = $2)
ORDER BY (r.run_id = $1) DESC
LIMIT 1`;

// A fork: the first checkpoint is inserted by the same statement, only when the row was.
const CREATE_SEEDED_SQL = `
WITH r AS (${CREATE_SQL}),
c AS (
  INSERT INTO {{schema}}.checkpoints
    (run_id, seq, epoch, journal_position, status, schema_version, created_at, size, body)
  SELECT r.run_id, $8, $9, $10, $11, $12, $13, $14, $15::json FROM r
)
SELECT * FROM r`;

/** The parameters $1-$6 that CREATE_SQL and create_run_and_lease() share. */
function newRunParams(run: NewRunToLease): unknown[] {
  return [
    run.runId,
    run.workflow,
    run.version,
    toJson(run.input, `input of run ${run.runId}`),
    run.idempotencyKey,
    run.traceparent ?? null,
  ];
}

async function create(db: Db, run: NewRun): Promise<{ created: boolean; run: RunRecord }> {
  const params = [...newRunParams(run), run.forkedFrom === undefined ? null : JSON.stringify(run.forkedFrom)];
  const [inserted] =
    run.checkpoint === undefined
      ? await db.query<RunRow>(CREATE_SQL, params)
      : await db.query<RunRow>(CREATE_SEEDED_SQL, [...params, ...encodeCheckpoint(run.checkpoint).params]);
  if (inserted !== undefined) return { created: true, run: toRunRecord(inserted) };
  const [existing] = await db.query<RunRow>(EXISTING_SQL, [run.runId, run.idempotencyKey]);
  if (existing === undefined)
    throw new Error(`run ${run.runId} conflicted on insert but cannot be read back`);
  return { created: false, run: toRunRecord(existing) };
}

/** create_run_and_lease() (migration 007) for one run; batch.ts sends many in one statement. */
export const CREATE_AND_LEASE_SQL =
  'SELECT * FROM {{schema}}.create_run_and_lease($1, $2, $3, $4::json, $5, $6, $7, $8)';

/** The parameters of {@link CREATE_AND_LEASE_SQL}, in its order. */
export function createAndLeaseParams(run: NewRunToLease, owner: string, ttlMs: number): unknown[] {
  return [...newRunParams(run), owner, Math.ceil(ttlMs)];
}

export type CreateAndLeaseRow = RunRow & AcquireRow & { created: boolean };

/** What runs.createAndLease answers for the row create_run_and_lease() returned. */
export function createdAndLeased(runId: string, row: CreateAndLeaseRow | undefined): CreatedAndLeased {
  if (row === undefined) throw new Error(`run ${runId} conflicted on insert but cannot be read back`);
  if (!row.created) return { created: false, run: toRunRecord(row) };
  return { created: true, run: toRunRecord(row), lease: acquireResult(row) };
}

/**
 * runs.create and, when it created the run, leases.acquire: one call of create_run_and_lease(),
 * so one transaction and one round trip.
 */
async function createAndLease(
  db: Db,
  run: NewRunToLease,
  owner: string,
  ttlMs: number,
): Promise<CreatedAndLeased> {
  const [row] = await db.query<CreateAndLeaseRow>(
    CREATE_AND_LEASE_SQL,
    createAndLeaseParams(run, owner, ttlMs),
  );
  return createdAndLeased(run.runId, row);
}

const GET_SQL = `SELECT ${RUN_COLUMNS} FROM {{schema}}.runs r WHERE r.run_id = $1`;

async function get(db: Db, runId: string): Promise<RunRecord | undefined> {
  const [row] = await db.query<RunRow>(GET_SQL, [runId]);
  return row === undefined ? undefined : toRunRecord(row);
}

/** finish_run() for one run; batch.ts sends many in one statement. */
export const FINISH_SQL = `
SELECT {{schema}}.finish_run($1, $2, $3, $4::json, $5::json, $6, $7, $8, $9, $10, $11, $12, $13::json) AS finished`;

/** The parameters of {@link FINISH_SQL}, in its order (no checkpoint: eight nulls). */
export function finishParams(
  runId: string,
  epoch: number,
  outcome: RunOutcome,
  checkpoint?: Checkpoint,
): unknown[] {
  const result = outcome.status === 'completed' ? toJson(outcome.result, `result of run ${runId}`) : null;
  const error = outcome.status === 'completed' ? null : toJson(outcome.error, `error of run ${runId}`);
  const params =
    checkpoint === undefined ? Array.from({ length: 8 }, () => null) : encodeCheckpoint(checkpoint).params;
  return [runId, epoch, outcome.status, result, error, ...params];
}

/** runs.finish's answer to finish_run()'s row: nothing, or fenced. */
export function finished(runId: string, epoch: number, row: { finished: boolean } | undefined): void {
  if (!row?.finished) throw new FencedWriteError(runId, epoch, 'runs.finish');
}

async function finish(
  db: Db,
  runId: string,
  epoch: number,
  outcome: RunOutcome,
  checkpoint?: Checkpoint,
): Promise<void> {
  const [row] = await db.query<{ finished: boolean }>(
    FINISH_SQL,
    finishParams(runId, epoch, outcome, checkpoint),
  );
  finished(runId, epoch, row);
}

// Redrive: the lease row is the gate (a concurrent call waits on its lock, then finds it no longer
// 'finished'); the run, the checkpoint and the lease change in one statement.
const REOPEN_SQL = `
WITH l AS (
  UPDATE {{schema}}.leases l
    SET state = 'held', owner = NULL, expires_at = {{schema}}.now_ms(), waiting_for = '{}',
        failed_epoch = NULL, failed_claims = 0
  FROM {{schema}}.runs r
  WHERE l.run_id = $1 AND r.run_id = $1 AND l.state = 'finished' AND l.epoch = $3 AND r.status = 'failed'
  RETURNING l.run_id
),
r AS (
  UPDATE {{schema}}.runs r SET status = 'pending', error = NULL, updated_at = {{schema}}.now_ms()
  WHERE r.run_id IN (SELECT run_id FROM l)
  RETURNING r.run_id
),
c AS (
  INSERT INTO {{schema}}.checkpoints
    (run_id, seq, epoch, journal_position, status, schema_version, created_at, size, body)
  SELECT l.run_id, $2, $3, $4, $5, $6, $7, $8, $9::json FROM l
)
SELECT (SELECT count(*) FROM r)::int AS reopened,
       (SELECT x.status FROM {{schema}}.runs x WHERE x.run_id = $1) AS status`;

async function reopen(db: Db, runId: string, checkpoint: Checkpoint): Promise<ReopenResult> {
  const [row] = await db.query<{ reopened: number; status: RunStatus | null }>(REOPEN_SQL, [
    runId,
    ...encodeCheckpoint(checkpoint).params,
  ]);
  if (row !== undefined && row.reopened > 0) return { reopened: true };
  return { reopened: false, status: row?.status ?? undefined };
}

async function continueAs(db: Db, runId: string, epoch: number, successorRunId: string): Promise<void> {
  const [row] = await db.query<{ ok: boolean }>('SELECT {{schema}}.continue_run_as($1, $2, $3) AS ok', [
    runId,
    epoch,
    successorRunId,
  ]);
  if (!row?.ok) throw new FencedWriteError(runId, epoch, 'runs.continueAs');
}

/** `store.runs` over the pool, but its queries (queries.ts). */
export const runIndex: OperationsOf<Db, RunIndex> = {
  create,
  createAndLease,
  get,
  finish,
  continueAs,
  reopen,
};

export function toRunRecord(row: RunRow): RunRecord {
  const record: RunRecord = {
    runId: row.run_id,
    workflow: row.workflow,
    version: row.version,
    input: fromJson(row.input),
    idempotencyKey: row.idempotency_key,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    attempts: row.attempts,
  };
  if (row.traceparent !== null) record.traceparent = row.traceparent;
  if (row.forked_from !== null) record.forkedFrom = fromJson(row.forked_from) as RunRecord['forkedFrom'];
  if (row.status === 'completed') record.result = fromJson(row.result);
  if (row.error !== null) record.error = fromJson(row.error) as RunRecord['error'];
  if (row.attributes != null) record.attributes = fromJson(row.attributes) as RunRecord['attributes'];
  if (row.continued_as != null) record.continuedAs = row.continued_as;
  return record;
}
