/**
 * Run queries on Postgres beyond the shared conformance section: migration 011 on a schema that
 * already holds runs (its counts filled from them, its indexes serving the listing), and counts
 * kept through the retention sweep and a reopen, which the conformance section does not change.
 */
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { Checkpoint, RunQuery } from '@baton/core/adapter';
import { loadMigrations } from './migrations.js';
import { postgresStore } from './index.js';
import { inSchema } from './sql.js';
import { TestSchemas, admin, url } from './test-support.spec-helper.js';

const schemas = new TestSchemas();
afterAll(() => schemas.dropAll());

/** Migrations before run queries, applied as the runner would, so the next connect applies 011. */
async function schemaAtVersion10(schema: string): Promise<void> {
  const quoted = `"${schema}"`;
  const earlier = loadMigrations().filter((m) => m.version <= 10);
  expect(earlier.map((m) => m.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const recorded = earlier.map((m) => `(${m.version}, '${m.name}')`).join(', ');
  // One multi-statement query: Postgres runs it as one transaction.
  await admin(
    [
      `CREATE SCHEMA ${quoted}`,
      `CREATE TABLE ${quoted}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now())`,
      ...earlier.map((m) => inSchema(m.sql, quoted)),
      `INSERT INTO ${quoted}.schema_migrations (version, name) VALUES ${recorded}`,
    ].join(';\n'),
  );
}

function checkpointOf(runId: string, seq: number, epoch: number): Checkpoint {
  return {
    runId,
    seq,
    epoch,
    journalPosition: 0,
    entries: [],
    status: 'running',
    schemaVersion: 1,
    createdAt: Date.now(),
  };
}

describe('postgres store: run queries', () => {
  it('migration 011 counts the runs a schema already holds and lists them through its indexes', async () => {
    const schema = schemas.name();
    await schemaAtVersion10(schema);
    // Runs written before the migration, as an older store wrote them.
    const rows: [string, string, string, number][] = [
      ['old-a1', 'alpha', 'completed', 1_000],
      ['old-a2', 'alpha', 'completed', 2_000],
      ['old-a3', 'alpha', 'failed', 3_000],
      ['old-b1', 'beta', 'pending', 4_000],
    ];
    for (const [runId, workflow, status, at] of rows) {
      await admin(
        `INSERT INTO "${schema}".runs (run_id, workflow, version, status, created_at, updated_at)
         VALUES ($1, $2, 1, $3, $4, $4)`,
        [runId, workflow, status, at],
      );
    }
    const store = postgresStore({ url, schema, poolSize: 2 });
    try {
      const counts = await store.runs.count();
      expect(counts.byWorkflow).toEqual({ alpha: { completed: 2, failed: 1 }, beta: { pending: 1 } });
      expect(counts.total).toBe(4);
      expect(counts.byStatus).toMatchObject({ completed: 2, failed: 1, pending: 1, running: 0 });
      const page = await store.runs.list({ workflow: 'alpha', limit: 2 });
      expect(page.runs.map((r) => [r.runId, r.createdAt, r.owner, r.epoch])).toEqual([
        ['old-a3', 3_000, null, 0],
        ['old-a2', 2_000, null, 0],
      ]);
      const rest = await store.runs.list({ workflow: 'alpha', limit: 2, cursor: page.cursor! });
      expect(rest.runs.map((r) => r.runId)).toEqual(['old-a1']);
      expect(rest.cursor).toBeUndefined();

      // The planner can serve the workflow listing and the run id prefix from the new indexes
      // (sequential scans off: on four rows it would rightly prefer one).
      const plan = async (where: string, order = true): Promise<string> => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query('SET enable_seqscan = off');
          const { rows } = await client.query<{ 'QUERY PLAN': string }>(
            `EXPLAIN SELECT r.run_id FROM "${schema}".runs r WHERE ${where}
             ${order ? 'ORDER BY r.created_at DESC, r.run_id COLLATE "C" DESC LIMIT 3' : ''}`,
          );
          return rows.map((row) => row['QUERY PLAN']).join('\n');
        } finally {
          await client.end();
        }
      };
      expect(await plan(`r.workflow = 'alpha'`)).toContain('runs_by_workflow_created');
      expect(await plan(`r.status = 'failed'`)).toContain('runs_by_status_created');
      expect(await plan('true')).toContain('runs_by_created');
      // The keyset condition of a later page is an index condition, not a filter on every row.
      expect(
        await plan(
          `r.workflow = 'alpha' AND (r.created_at, r.run_id COLLATE "C") < (2000::bigint, 'old-a2'::text)`,
        ),
      ).toMatch(/Index Cond: .*ROW\(created_at, run_id\) < ROW/);
      expect(await plan(`r.run_id LIKE 'old-a%'`, false)).toContain('runs_by_run_id_prefix');
      expect(await plan(`r.idempotency_key LIKE 'k%'`, false)).toContain('runs_by_key_prefix');
    } finally {
      await store.close();
    }
  });

  it('takes fractional and far-off time bounds and versions as the other stores do; refuses a made-up cursor', async () => {
    const store = schemas.store();
    try {
      const { run } = await store.runs.create({
        runId: 'bounds-1',
        workflow: 'bounds',
        version: 1,
        input: null,
        idempotencyKey: null,
      });
      const list = async (query: RunQuery) =>
        (await store.runs.list({ workflow: 'bounds', ...query })).runs.map((r) => r.runId);
      expect(await list({ createdAfter: run.createdAt - 0.5 })).toEqual(['bounds-1']);
      expect(await list({ createdAfter: run.createdAt + 0.5 })).toEqual([]);
      expect(await list({ createdBefore: run.createdAt + 0.5 })).toEqual(['bounds-1']);
      expect(await list({ updatedBefore: 1e300, updatedAfter: -1e300 })).toEqual(['bounds-1']);
      expect(await list({ version: 2 ** 40 })).toEqual([]);
      // A cursor with the right fingerprint but a createdAt no Postgres run can have.
      const { cursor } = await store.runs.list({ workflow: 'bounds', limit: 1 });
      expect(cursor).toBeUndefined();
      await store.runs.create({
        runId: 'bounds-2',
        workflow: 'bounds',
        version: 1,
        input: null,
        idempotencyKey: null,
      });
      const issued = (await store.runs.list({ workflow: 'bounds', limit: 1 })).cursor!;
      const body = JSON.parse(Buffer.from(issued, 'base64url').toString('utf8')) as { c: number };
      const forged = Buffer.from(JSON.stringify({ ...body, c: body.c + 0.5 }), 'utf8').toString('base64url');
      await expect(store.runs.list({ workflow: 'bounds', limit: 1, cursor: forged })).rejects.toMatchObject({
        code: 'BATON_CONFIG',
        message: expect.stringMatching(/cursor is malformed/),
      });
    } finally {
      await store.close();
    }
  });

  it('keeps counts through a reopen and a retention sweep', async () => {
    const store = schemas.store();
    try {
      const workflow = 'sweep';
      const ids = ['sw-1', 'sw-2', 'sw-3'];
      for (const runId of ids) {
        await store.runs.create({ runId, workflow, version: 1, input: null, idempotencyKey: null });
        const lease = await store.leases.acquire(runId, 'worker-s', 60_000);
        if (!lease.ok) throw new Error(`could not claim ${runId}`);
        await store.runs.finish(
          runId,
          lease.epoch,
          runId === 'sw-3'
            ? { status: 'failed', error: { name: 'Error', message: 'x' } }
            : { status: 'completed', result: 1 },
        );
      }
      expect((await store.runs.count()).byWorkflow[workflow]).toEqual({ completed: 2, failed: 1 });
      // Reopen moves the failed run back to pending.
      const lease = await store.leases.get('sw-3');
      expect(await store.runs.reopen('sw-3', checkpointOf('sw-3', 1, lease!.epoch))).toEqual({
        reopened: true,
      });
      expect((await store.runs.count()).byWorkflow[workflow]).toEqual({ completed: 2, pending: 1 });
      // The sweep deletes the finished ones in one batch.
      const deleted = await store.retention.deleteExpired(0, 10, 60_000);
      expect(deleted.sort()).toEqual(['sw-1', 'sw-2']);
      expect((await store.runs.count()).byWorkflow[workflow]).toEqual({ pending: 1 });
      expect((await store.runs.count()).total).toBe(1);
    } finally {
      await store.close();
    }
  });
});
