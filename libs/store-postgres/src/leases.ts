/**
 * LeaseStore in SQL (`store.leases`): acquire, renew, release, suspend, reap, read. Each
 * operation is one statement or one function call.
 *
 * Invariants:
 * 1. A lease's epoch only grows, and only acquire_lease raises it, under the row lock of its
 *    INSERT … ON CONFLICT DO UPDATE: two workers acquiring at once get epochs n and a refusal.
 * 2. Every comparison with an expiry uses the server's clock ({{schema}}.now_ms()).
 * 3. An ownerless `held` lease is acquirable at once; its expiry only paces the reaper. A renewal
 *    needs an owner, so a reaped or handed-off lease can never be renewed by its old holder.
 * 4. Reapers lock the rows they reap with FOR UPDATE SKIP LOCKED and move their expiry on before
 *    committing, so reapers on several workers never report the same run in one period.
 */

import { FencedWriteError } from '@baton/core/adapter';
import type {
  AcquireResult,
  LeaseInfo,
  LeaseState,
  LeaseStore,
  OperationsOf,
  RenewRequest,
  RenewResult,
  SuspendRequest,
  SuspendResult,
} from '@baton/core/adapter';
import type { Db } from './db.js';

export interface AcquireRow {
  acquired: boolean;
  lease_epoch: number;
  lease_owner: string | null;
  lease_state: LeaseState;
  lease_expires_at: number | null;
  cancel_requested: boolean;
}

async function acquire(db: Db, runId: string, owner: string, ttlMs: number): Promise<AcquireResult> {
  const [row] = await db.query<AcquireRow>('SELECT * FROM {{schema}}.acquire_lease($1, $2, $3)', [
    runId,
    owner,
    Math.ceil(ttlMs),
  ]);
  if (row === undefined) throw new Error(`acquire_lease returned no row for ${runId}`);
  return acquireResult(row);
}

/** acquire_lease's columns as the contract's result. */
export function acquireResult(row: AcquireRow): AcquireResult {
  if (row.acquired) return { ok: true, epoch: row.lease_epoch, cancelRequested: row.cancel_requested };
  if (row.lease_state === 'finished') return { ok: false, reason: 'finished' };
  if (row.lease_state === 'paused') return { ok: false, reason: 'paused' };
  return { ok: false, reason: 'held', owner: row.lease_owner, expiresAt: row.lease_expires_at ?? 0 };
}

/** One statement for the whole batch: the requests travel as two parallel arrays. */
const RENEW_SQL = `
WITH req AS (
  SELECT r.run_id, r.epoch, r.ord
  FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS r(run_id, epoch, ord)
), renewed AS (
  UPDATE {{schema}}.leases l
  SET expires_at = {{schema}}.now_ms() + $3
  FROM req
  WHERE l.run_id = req.run_id AND l.epoch = req.epoch AND l.state = 'held'
    AND l.owner IS NOT NULL AND l.expires_at > {{schema}}.now_ms()
  RETURNING l.run_id, l.epoch
)
SELECT req.run_id,
       EXISTS (SELECT 1 FROM renewed n WHERE n.run_id = req.run_id AND n.epoch = req.epoch) AS ok,
       EXISTS (SELECT 1 FROM {{schema}}.cancel_requests c WHERE c.run_id = req.run_id) AS cancel_requested,
       EXISTS (SELECT 1 FROM {{schema}}.leases p WHERE p.run_id = req.run_id AND p.pause_requested)
         AS pause_requested
FROM req
ORDER BY req.ord`;

async function renew(db: Db, requests: readonly RenewRequest[], ttlMs: number): Promise<RenewResult[]> {
  if (requests.length === 0) return [];
  const rows = await db.query<{
    run_id: string;
    ok: boolean;
    cancel_requested: boolean;
    pause_requested: boolean;
  }>(RENEW_SQL, [requests.map((r) => r.runId), requests.map((r) => r.epoch), Math.ceil(ttlMs)]);
  return rows.map((row) => ({
    runId: row.run_id,
    ok: row.ok,
    cancelRequested: row.cancel_requested,
    ...(row.pause_requested && { pauseRequested: true }),
  }));
}

/** Hand-off: held by nobody, expired now; the timer goes too (as on every wake). */
const RELEASE_SQL = `
WITH released AS (
  UPDATE {{schema}}.leases l
  SET owner = NULL, expires_at = {{schema}}.now_ms(), waiting_for = '{}'
  WHERE l.run_id = $1 AND l.epoch = $2 AND l.state = 'held'
  RETURNING l.run_id
), untimed AS (
  DELETE FROM {{schema}}.timers t USING released r WHERE t.run_id = r.run_id
)
SELECT count(*) AS released FROM released`;

async function release(db: Db, runId: string, epoch: number): Promise<boolean> {
  const [row] = await db.query<{ released: number }>(RELEASE_SQL, [runId, epoch]);
  return (row?.released ?? 0) > 0;
}

const REAP_SQL = `
WITH expired AS (
  SELECT l.run_id, l.expires_at
  FROM {{schema}}.leases l
  WHERE l.state = 'held' AND l.expires_at <= {{schema}}.now_ms()
  ORDER BY l.expires_at, l.run_id
  LIMIT greatest($1::integer, 0)
  FOR UPDATE SKIP LOCKED
), reaped AS (
  UPDATE {{schema}}.leases l
  SET owner = NULL, expires_at = {{schema}}.now_ms() + $2
  FROM expired e
  WHERE l.run_id = e.run_id
  RETURNING l.run_id, e.expires_at AS old_expiry
)
SELECT r.run_id FROM reaped r ORDER BY r.old_expiry, r.run_id`;

async function reapExpired(db: Db, limit: number, reclaimAfterMs: number): Promise<string[]> {
  const rows = await db.query<{ run_id: string }>(REAP_SQL, [Math.floor(limit), Math.ceil(reclaimAfterMs)]);
  return rows.map((r) => r.run_id);
}

const GET_LEASE_SQL = `
SELECT l.epoch, l.owner, l.state, l.expires_at, l.pause_requested, l.pause_reason, l.waiting_for,
       (SELECT t.due_at FROM {{schema}}.timers t WHERE t.run_id = l.run_id) AS wake_at,
       EXISTS (SELECT 1 FROM {{schema}}.cancel_requests c WHERE c.run_id = l.run_id) AS cancel_requested,
       (SELECT c.reason FROM {{schema}}.cancel_requests c WHERE c.run_id = l.run_id) AS cancel_reason
FROM {{schema}}.leases l
WHERE l.run_id = $1`;

async function get(db: Db, runId: string): Promise<LeaseInfo | undefined> {
  const [row] = await db.query<{
    epoch: number;
    owner: string | null;
    state: LeaseState;
    expires_at: number | null;
    cancel_requested: boolean;
    cancel_reason: string | null;
    pause_requested: boolean;
    pause_reason: string | null;
    waiting_for: string[] | null;
    wake_at: number | string | null;
  }>(GET_LEASE_SQL, [runId]);
  if (row === undefined) return undefined;
  return {
    runId,
    epoch: row.epoch,
    owner: row.owner,
    state: row.state,
    expiresAt: row.state === 'held' ? row.expires_at : null,
    cancelRequested: row.cancel_requested,
    ...(row.cancel_reason !== null && { cancelReason: row.cancel_reason }),
    // A request is only news while the run is held; a run that finished first keeps none.
    ...(row.state === 'held' && row.pause_requested && { pauseRequested: true }),
    ...((row.state === 'held' || row.state === 'paused') &&
      row.pause_reason !== null && { pauseReason: row.pause_reason }),
    ...(row.state === 'suspended' && {
      waitingFor: {
        signals: row.waiting_for ?? [],
        wakeAt: row.wake_at === null ? null : Number(row.wake_at),
      },
    }),
  };
}

async function now(db: Db): Promise<number> {
  const [row] = await db.query<{ now: number }>('SELECT {{schema}}.now_ms() AS now');
  // Never fall back to this process's clock: the store's clock is the only one leases trust.
  if (row === undefined) throw new Error('now_ms() returned no row');
  return row.now;
}

async function suspend(db: Db, request: SuspendRequest): Promise<SuspendResult> {
  const [row] = await db.query<{ outcome: string }>(
    'SELECT {{schema}}.suspend_run($1, $2, $3, $4::text[], $5::text[]) AS outcome',
    [
      request.runId,
      request.epoch,
      request.wakeAt === null ? null : Math.ceil(request.wakeAt),
      request.signals,
      request.consumedSignalIds,
    ],
  );
  switch (row?.outcome) {
    case 'suspended':
      return { ok: true };
    case 'paused':
      return { ok: true, paused: true };
    case 'signal-pending':
    case 'cancel-requested':
      return { ok: false, reason: row.outcome };
    default:
      throw new FencedWriteError(request.runId, request.epoch, 'leases.suspend');
  }
}

/** record_claim_failure() (migration 008): the failed claims in a row, or FencedWriteError. */
async function recordClaimFailure(db: Db, runId: string, epoch: number): Promise<number> {
  const [row] = await db.query<{ count: number | null }>(
    'SELECT {{schema}}.record_claim_failure($1, $2) AS count',
    [runId, epoch],
  );
  if (row?.count === null || row?.count === undefined)
    throw new FencedWriteError(runId, epoch, 'leases.recordClaimFailure');
  return Number(row.count);
}

/** `store.leases` over the pool. */
export const leases: OperationsOf<Db, LeaseStore> = {
  acquire,
  renew,
  release,
  suspend,
  reapExpired,
  get,
  now,
  recordClaimFailure,
};
