/**
 * Waiting runs in SQL: leases.suspend, the signal inbox, cancel requests and timers.
 *
 * Invariants:
 * 1. suspend_run, deliver_signal and request_cancel all lock the run's lease row first, so a
 *    signal or cancel either lands before a suspension (which then sees it and refuses) or after
 *    it (and then wakes the run): a wake-up is never lost between the two.
 * 2. A run has a timer row only while its lease is suspended; waking by signal or cancel,
 *    acquiring and finishing all delete it.
 * 3. timers.claimDue locks the timers it returns (FOR UPDATE SKIP LOCKED) and pushes them
 *    `redeliverAfterMs` on before committing, so concurrent scanners never return one twice.
 */

import { FencedWriteError } from '@baton/core/adapter';
import type {
  CancelRequestResult,
  DueTimer,
  InboxSignal,
  SuspendRequest,
  SuspendResult,
} from '@baton/core/adapter';
import { fromJson, toJson, type Db } from './db.js';

export async function suspendRun(db: Db, request: SuspendRequest): Promise<SuspendResult> {
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
      throw new FencedWriteError(request.runId, request.epoch, 'suspend');
  }
}

export async function requestCancel(
  db: Db,
  runId: string,
  reason: string | undefined,
  channel: string,
): Promise<CancelRequestResult> {
  const [row] = await db.query<{ run_found: boolean; wake_run: boolean; too_late: boolean }>(
    'SELECT * FROM {{schema}}.request_cancel($1, $2::text, $3::text)',
    [runId, reason ?? null, channel],
  );
  return {
    found: row?.run_found ?? false,
    wake: row?.wake_run ?? false,
    ...(row?.too_late === true && { tooLate: true }),
  };
}

export async function closeCancels(
  db: Db,
  runId: string,
  epoch: number,
): Promise<{ cancelRequested: boolean; cancelReason?: string }> {
  const [row] = await db.query<{ outcome: string; cancel_reason: string | null }>(
    'SELECT * FROM {{schema}}.close_cancels($1, $2)',
    [runId, epoch],
  );
  if (row?.outcome === 'closed') return { cancelRequested: false };
  if (row?.outcome !== 'cancel-requested') throw new FencedWriteError(runId, epoch, 'close cancels');
  return { cancelRequested: true, ...(row.cancel_reason !== null && { cancelReason: row.cancel_reason }) };
}

export async function deliverSignal(
  db: Db,
  runId: string,
  signal: Omit<InboxSignal, 'receivedAt'>,
): Promise<{ found: boolean; wake: boolean; dropped?: boolean }> {
  const [row] = await db.query<{ run_found: boolean; wake_run: boolean; dropped: boolean }>(
    'SELECT * FROM {{schema}}.deliver_signal($1, $2, $3, $4::json)',
    [runId, signal.signalId, signal.name, toJson(signal.payload, `payload of signal ${signal.signalId}`)],
  );
  if (row?.dropped === true) return { found: true, wake: false, dropped: true };
  return { found: row?.run_found ?? false, wake: row?.wake_run ?? false };
}

const READ_SIGNALS_SQL = `
SELECT s.signal_id, s.name, s.payload::text AS payload, s.received_at
FROM {{schema}}.signals s
WHERE s.run_id = $1
ORDER BY s.id`;

export async function readSignals(db: Db, runId: string): Promise<InboxSignal[]> {
  const rows = await db.query<{
    signal_id: string;
    name: string;
    payload: string | null;
    received_at: number;
  }>(READ_SIGNALS_SQL, [runId]);
  return rows.map((row) => ({
    signalId: row.signal_id,
    name: row.name,
    payload: fromJson(row.payload),
    receivedAt: row.received_at,
  }));
}

const CLAIM_TIMERS_SQL = `
WITH due AS (
  SELECT t.run_id, t.due_at
  FROM {{schema}}.timers t
  WHERE t.due_at <= {{schema}}.now_ms()
  ORDER BY t.due_at, t.run_id
  LIMIT greatest($1::integer, 0)
  FOR UPDATE SKIP LOCKED
), pushed AS (
  UPDATE {{schema}}.timers t
  SET due_at = {{schema}}.now_ms() + $2
  FROM due d
  WHERE t.run_id = d.run_id
  RETURNING t.run_id, d.due_at
)
SELECT p.run_id, p.due_at FROM pushed p ORDER BY p.due_at, p.run_id`;

export async function claimDueTimers(db: Db, limit: number, redeliverAfterMs: number): Promise<DueTimer[]> {
  const rows = await db.query<{ run_id: string; due_at: number }>(CLAIM_TIMERS_SQL, [
    Math.floor(limit),
    Math.ceil(redeliverAfterMs),
  ]);
  return rows.map((row) => ({ runId: row.run_id, dueAt: row.due_at }));
}
