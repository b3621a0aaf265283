/**
 * Waiting runs in SQL: the signal inbox (`store.signals`) and timers (`store.timers`); what
 * suspends a run is leases.suspend (leases.ts), what wakes it by cancel control.requestCancel
 * (control.ts).
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

import type { DueTimer, InboxSignal, OperationsOf, SignalInbox, TimerStore } from '@baton/core/adapter';
import { fromJson, toJson, type Db } from './db.js';

/** What `signals.deliver` answers (contracts/waits.ts). */
type Delivered = Awaited<ReturnType<SignalInbox['deliver']>>;

async function deliver(db: Db, runId: string, signal: Omit<InboxSignal, 'receivedAt'>): Promise<Delivered> {
  const [row] = await db.query<{
    run_found: boolean;
    wake_run: boolean;
    dropped: boolean;
    continued_as: string | null;
  }>('SELECT * FROM {{schema}}.deliver_signal($1, $2, $3, $4::json)', [
    runId,
    signal.signalId,
    signal.name,
    toJson(signal.payload, `payload of signal ${signal.signalId}`),
  ]);
  if (row !== undefined && row.continued_as !== null) {
    return { found: true, wake: false, continuedAs: row.continued_as, ...(row.dropped && { dropped: true }) };
  }
  if (row?.dropped === true) return { found: true, wake: false, dropped: true };
  return { found: row?.run_found ?? false, wake: row?.wake_run ?? false };
}

const READ_SIGNALS_SQL = `
SELECT s.signal_id, s.name, s.payload::text AS payload, s.received_at
FROM {{schema}}.signals s
WHERE s.run_id = $1
ORDER BY s.id`;

async function read(db: Db, runId: string): Promise<InboxSignal[]> {
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

async function claimDue(db: Db, limit: number, redeliverAfterMs: number): Promise<DueTimer[]> {
  const rows = await db.query<{ run_id: string; due_at: number }>(CLAIM_TIMERS_SQL, [
    Math.floor(limit),
    Math.ceil(redeliverAfterMs),
  ]);
  return rows.map((row) => ({ runId: row.run_id, dueAt: row.due_at }));
}

/** `store.signals` over the pool. */
export const signals: OperationsOf<Db, SignalInbox> = { deliver, read };

/** `store.timers` over the pool. */
export const timers: OperationsOf<Db, TimerStore> = { claimDue };
