/**
 * Updates on Postgres (`store.updates`, contracts/updates.ts in @baton/core; migration 023): one row
 * per run and update id, pending until settled, deleted with the run's record. A request and a
 * settle are one function call each (request_update, settle_update), reads one statement.
 */
import {
  FencedWriteError,
  type KeptUpdate,
  type OperationsOf,
  type UpdateOutcome,
  type UpdateRequest,
  type UpdateRequestResult,
  type UpdateStore,
} from '@baton/core/adapter';
import { fromJson, toJson, type Db } from './db.js';

interface KeptRow {
  kept_name: string | null;
  kept_outcome: string | null;
  kept_at: string | number | null;
}

function keptUpdate(updateId: string, row: KeptRow): KeptUpdate {
  return {
    updateId,
    name: row.kept_name ?? '',
    outcome: fromJson(row.kept_outcome) as UpdateOutcome,
    settledAt: Number(row.kept_at),
  };
}

async function request(
  db: Db,
  runId: string,
  asked: Omit<UpdateRequest, 'requestedAt'>,
): Promise<UpdateRequestResult> {
  const [row] = await db.query<
    KeptRow & { run_found: boolean; wake_run: boolean; run_finished: boolean; continued_as: string | null }
  >(
    'SELECT run_found, wake_run, run_finished, kept_name, kept_outcome::text AS kept_outcome, kept_at, ' +
      'continued_as FROM {{schema}}.request_update($1, $2, $3, $4::json)',
    [runId, asked.updateId, asked.name, toJson(asked.args, `arguments of update ${asked.updateId}`)],
  );
  if (row === undefined || !row.run_found) return { found: false, wake: false };
  if (row.kept_at !== null) return { found: true, wake: false, kept: keptUpdate(asked.updateId, row) };
  if (row.continued_as !== null) {
    return {
      found: true,
      wake: false,
      continuedAs: row.continued_as,
      ...(row.run_finished && { finished: true }),
    };
  }
  if (row.run_finished) return { found: true, wake: false, finished: true };
  return { found: true, wake: row.wake_run };
}

const PENDING_SQL = `
SELECT u.update_id, u.name, u.args::text AS args, u.requested_at
FROM {{schema}}.updates u
WHERE u.run_id = $1 AND u.settled_at IS NULL
ORDER BY u.id`;

async function pending(db: Db, runId: string): Promise<UpdateRequest[]> {
  const rows = await db.query<{
    update_id: string;
    name: string;
    args: string | null;
    requested_at: string | number;
  }>(PENDING_SQL, [runId]);
  return rows.map((row) => ({
    updateId: row.update_id,
    name: row.name,
    args: fromJson(row.args),
    requestedAt: Number(row.requested_at),
  }));
}

const WAITING_SQL = `
SELECT DISTINCT u.run_id FROM {{schema}}.updates u
WHERE u.run_id = ANY ($1::text[]) AND u.settled_at IS NULL`;

async function waiting(db: Db, runIds: readonly string[]): Promise<string[]> {
  if (runIds.length === 0) return [];
  const rows = await db.query<{ run_id: string }>(WAITING_SQL, [[...new Set(runIds)]]);
  return rows.map((row) => row.run_id);
}

async function settle(
  db: Db,
  runId: string,
  epoch: number,
  settlement: Omit<KeptUpdate, 'settledAt'>,
): Promise<KeptUpdate> {
  const [row] = await db.query<KeptRow & { answer: string }>(
    'SELECT answer, kept_name, kept_outcome::text AS kept_outcome, kept_at ' +
      'FROM {{schema}}.settle_update($1, $2, $3, $4, $5::json)',
    [
      runId,
      epoch,
      settlement.updateId,
      settlement.name,
      toJson(settlement.outcome, `outcome of update ${settlement.updateId}`),
    ],
  );
  if (row?.answer !== 'ok')
    throw new FencedWriteError(runId, epoch, `updates.settle(${settlement.updateId})`);
  return keptUpdate(settlement.updateId, row);
}

const OUTCOME_SQL = `
SELECT u.name AS kept_name, u.outcome::text AS kept_outcome, u.settled_at AS kept_at
FROM {{schema}}.updates u
WHERE u.run_id = $1 AND u.update_id = $2 AND u.settled_at IS NOT NULL`;

async function outcome(db: Db, runId: string, updateId: string): Promise<KeptUpdate | undefined> {
  const [row] = await db.query<KeptRow>(OUTCOME_SQL, [runId, updateId]);
  return row === undefined ? undefined : keptUpdate(updateId, row);
}

/** `store.updates` over the pool. */
export const updates: OperationsOf<Db, UpdateStore> = { request, pending, waiting, settle, outcome };
