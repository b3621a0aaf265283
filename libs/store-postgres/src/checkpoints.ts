/**
 * CheckpointStore in SQL (`store.checkpoints`): fenced writes with history, the newest load, summaries.
 *
 * Invariants:
 * 1. A checkpoint lands only while its epoch is the lease's epoch and the lease is not finished.
 *    The write holds a FOR SHARE lock on the lease row while it inserts, so an acquire (which
 *    updates that row) is ordered entirely before or after it: a stale writer can never slip a
 *    checkpoint in after a new owner took over.
 * 2. History is kept in write order (`id`); the newest is the last written.
 * 3. The body is stored as the JSON text the writer encoded, so its size is the size stored.
 */

import {
  parseStoredCheckpoint,
  type Checkpoint,
  type CheckpointStore,
  type CheckpointSummary,
  FencedWriteError,
  type OperationsOf,
} from '@baton/core/adapter';
import { toJson, type Db } from './db.js';

/** A checkpoint encoded for storage: the parameters of an insert, in the functions' order. */
export interface EncodedCheckpoint {
  params: [number, number, number, string, number, number, number, string];
}

/** Encodes a checkpoint: summary fields, size in bytes of its UTF-8 JSON, and the JSON. */
export function encodeCheckpoint(checkpoint: Checkpoint): EncodedCheckpoint {
  const body = toJson(checkpoint, `checkpoint ${checkpoint.seq} of run ${checkpoint.runId}`) ?? 'null';
  return {
    params: [
      checkpoint.seq,
      checkpoint.epoch,
      checkpoint.journalPosition,
      checkpoint.status,
      checkpoint.schemaVersion,
      checkpoint.createdAt,
      Buffer.byteLength(body, 'utf8'),
      body,
    ],
  };
}

const WRITE_SQL = `
INSERT INTO {{schema}}.checkpoints
  (run_id, seq, epoch, journal_position, status, schema_version, created_at, size, body)
SELECT l.run_id, $2, $3, $4, $5, $6, $7, $8, $9::json
FROM {{schema}}.leases l
WHERE l.run_id = $1 AND l.epoch = $3 AND l.state <> 'finished'
FOR SHARE
RETURNING id`;

async function write(db: Db, checkpoint: Checkpoint): Promise<void> {
  const { params } = encodeCheckpoint(checkpoint);
  const rows = await db.query<{ id: number }>(WRITE_SQL, [checkpoint.runId, ...params]);
  if (rows.length === 0) throw new FencedWriteError(checkpoint.runId, checkpoint.epoch, 'checkpoints.write');
}

const LOAD_SQL = `
SELECT c.seq, c.body::text AS body
FROM {{schema}}.checkpoints c
WHERE c.run_id = $1 AND ($2::bigint IS NULL OR c.seq = $2)
ORDER BY c.id DESC
LIMIT 1`;

async function load(db: Db, runId: string, seq?: number): Promise<Checkpoint | undefined> {
  const [row] = await db.query<{ seq: number; body: string }>(LOAD_SQL, [runId, seq ?? null]);
  // The body column is json, so it parses; its shape may still be wrong (a hand edit, a restore):
  // CheckpointUnreadableError names the run and the row's seq.
  return row === undefined ? undefined : parseStoredCheckpoint(row.body, runId, Number(row.seq));
}

const LIST_SQL = `
SELECT c.seq, c.epoch, c.journal_position, c.status, c.schema_version, c.created_at, c.size
FROM {{schema}}.checkpoints c
WHERE c.run_id = $1
ORDER BY c.id`;

async function list(db: Db, runId: string): Promise<CheckpointSummary[]> {
  const rows = await db.query<{
    seq: number;
    epoch: number;
    journal_position: number;
    status: Checkpoint['status'];
    schema_version: number;
    created_at: number;
    size: number;
  }>(LIST_SQL, [runId]);
  return rows.map((row) => ({
    seq: row.seq,
    epoch: row.epoch,
    journalPosition: row.journal_position,
    status: row.status,
    schemaVersion: row.schema_version,
    createdAt: row.created_at,
    size: row.size,
  }));
}

/** `store.checkpoints` over the pool. */
export const checkpoints: OperationsOf<Db, CheckpointStore> = { write, load, list };
