/**
 * Damages a stored checkpoint row behind the store's back, as a restore or an operator's edit
 * would. The body column is `json`, so it always parses: the damage is to its shape.
 */
import type { CheckpointDamage } from '@baton/testing';
import { admin } from './test-support.spec-helper.js';

/** Rewrites the newest row of checkpoint `seq` of `runId` in `schema`. */
export async function damagePostgresCheckpoint(
  schema: string,
  runId: string,
  seq: number,
  damage: CheckpointDamage,
): Promise<void> {
  const table = `"${schema}".checkpoints`;
  const body =
    damage === 'garbage'
      ? `'"not a checkpoint"'::json`
      : damage === 'entries-not-list'
        ? `json_build_object('0', 'not a list')`
        : null;
  const sql =
    body === null
      ? `UPDATE ${table} SET body = (body::jsonb - 'status')::json`
      : damage === 'garbage'
        ? `UPDATE ${table} SET body = ${body}`
        : `UPDATE ${table} SET body = jsonb_set(body::jsonb, '{entries}', ${body}::jsonb)::json`;
  const rows = await admin(
    `${sql} WHERE id = (SELECT max(id) FROM ${table} WHERE run_id = $1 AND seq = $2) RETURNING id`,
    [runId, seq],
  );
  if (rows.length === 0) throw new Error(`run ${runId} has no checkpoint ${seq} in ${schema}`);
}
