/**
 * ConcurrencyStore on Postgres (`store.concurrency`; contracts/concurrency.ts in @baton/core; migration 019): one
 * function call per operation, serialized per key by the key's slot_keys row lock.
 */
import type { ConcurrencyStore, OperationsOf, SlotAnswer, SlotRequest, SlotState } from '@baton/core/adapter';
import type { Db } from './db.js';

async function acquire(db: Db, request: SlotRequest): Promise<SlotAnswer> {
  const rows = await db.query<{ acquired: boolean; wake: string[] }>(
    'SELECT acquired, wake FROM {{schema}}.acquire_slot($1, $2, $3)',
    [request.key, request.limit, request.runId],
  );
  return { acquired: rows[0]?.acquired === true, wake: rows[0]?.wake ?? [] };
}

async function release(db: Db, request: SlotRequest): Promise<string[]> {
  const rows = await db.query<{ wake: string[] }>('SELECT {{schema}}.release_slot($1, $2, $3) AS wake', [
    request.key,
    request.limit,
    request.runId,
  ]);
  return rows[0]?.wake ?? [];
}

async function state(db: Db, key: string): Promise<SlotState> {
  const holders = await db.query<{ run_id: string }>(
    'SELECT run_id FROM {{schema}}.slot_holders WHERE key = $1 ORDER BY run_id',
    [key],
  );
  const waiting = await db.query<{ run_id: string }>(
    'SELECT run_id FROM {{schema}}.slot_waiting WHERE key = $1 ORDER BY seq',
    [key],
  );
  return { holders: holders.map((r) => r.run_id), waiting: waiting.map((r) => r.run_id) };
}

/** `store.concurrency` over the pool. */
export const concurrency: OperationsOf<Db, ConcurrencyStore> = { acquire, release, state };
