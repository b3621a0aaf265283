/**
 * PayloadStore in SQL (`store.payloads`): the `payloads` table (migration 006), one row per (run, SHA-256), the
 * bytes as `bytea`. delete_run() deletes a run's rows in the same transaction as the run.
 */
import { bufferView, ownedBytes, type OperationsOf, type PayloadStore } from '@baton/core/adapter';
import type { Db } from './db.js';

/** ON CONFLICT DO NOTHING: a hash already stored keeps its first row (same bytes by definition). */
const PUT_SQL = `
INSERT INTO {{schema}}.payloads (run_id, sha256, data) VALUES ($1, $2, $3)
ON CONFLICT (run_id, sha256) DO NOTHING`;

const GET_SQL = `SELECT p.data FROM {{schema}}.payloads p WHERE p.run_id = $1 AND p.sha256 = $2`;

const DELETE_SQL = `DELETE FROM {{schema}}.payloads p WHERE p.run_id = ANY($1::text[])`;

async function put(db: Db, runId: string, sha256: string, data: Uint8Array): Promise<void> {
  await db.query(PUT_SQL, [runId, sha256, bufferView(data)]);
}

async function get(db: Db, runId: string, sha256: string): Promise<Uint8Array | undefined> {
  const [row] = await db.query<{ data: Buffer }>(GET_SQL, [runId, sha256]);
  return row === undefined ? undefined : ownedBytes(row.data);
}

async function deletePayloads(db: Db, runIds: readonly string[]): Promise<void> {
  if (runIds.length === 0) return;
  await db.query(DELETE_SQL, [[...runIds]]);
}

/** `store.payloads`' operations over the pool (its location is the store's). */
export const payloads: OperationsOf<Db, PayloadStore> = { put, get, delete: deletePayloads };
