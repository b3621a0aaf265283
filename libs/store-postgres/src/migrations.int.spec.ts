import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrations, MIGRATION_LOCK_KEY } from './migrations.js';
import { postgresStore } from './index.js';
import { TestSchemas, admin, url } from './test-support.spec-helper.js';

const schemas = new TestSchemas();
afterAll(() => schemas.dropAll());

describe('postgres store: migrations', () => {
  it('numbers its migration files 1, 2, … and names each', () => {
    const migrations = loadMigrations();
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    expect(migrations[0]).toMatchObject({ version: 1, name: 'init' });
    expect(migrations.every((m) => m.sql.includes('{{schema}}.'))).toBe(true);
    expect(Number.isSafeInteger(MIGRATION_LOCK_KEY)).toBe(true);
  });

  it('migrates a fresh schema once when several stores connect at the same moment', async () => {
    const schema = schemas.name();
    const stores = [1, 2, 3].map(() => postgresStore({ url, schema, poolSize: 2 }));
    try {
      await Promise.all(stores.map((s) => s.connect()));
      const applied = await admin<{ version: number; name: string }>(
        `SELECT version, name FROM "${schema}".schema_migrations ORDER BY version`,
      );
      expect(applied).toEqual(loadMigrations().map((m) => ({ version: m.version, name: m.name })));
      // Every store works on the one schema they share.
      const [a, b] = stores;
      expect(await a?.leases.acquire('shared', 'worker-a', 30_000)).toMatchObject({ ok: true, epoch: 1 });
      expect(await b?.leases.get('shared')).toMatchObject({ owner: 'worker-a' });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('finds nothing to do on a schema that is up to date', async () => {
    const schema = schemas.name();
    const first = postgresStore({ url, schema, poolSize: 1 });
    await first.connect();
    await first.close();
    const [{ applied_at: before } = { applied_at: undefined }] = await admin<{ applied_at: Date }>(
      `SELECT max(applied_at) AS applied_at FROM "${schema}".schema_migrations`,
    );
    const again = postgresStore({ url, schema, poolSize: 1 });
    await again.connect();
    await again.close();
    const rows = await admin<{ n: string; applied_at: Date }>(
      `SELECT count(*) AS n, max(applied_at) AS applied_at FROM "${schema}".schema_migrations`,
    );
    expect(rows[0]).toEqual({ n: String(loadMigrations().length), applied_at: before });
  });

  it('creates every table in its own schema and none elsewhere', async () => {
    const schema = schemas.name();
    const store = postgresStore({ url, schema, poolSize: 1 });
    await store.connect();
    await store.close();
    const tables = await admin<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      [schema],
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'cancel_requests',
      'checkpoints',
      'departed_workers',
      'group_logs',
      'journal_pointers',
      'journal_runs',
      'leases',
      'live_workers',
      'membership',
      'payloads',
      'promises',
      'queries',
      'rate_logs',
      'run_attribute_counts',
      'run_attributes',
      'run_counts',
      'run_tombstones',
      'runs',
      'scan_turns',
      'schedules',
      'schema_migrations',
      'server_incarnation',
      'signals',
      'slot_holders',
      'slot_keys',
      'slot_waiting',
      'timers',
      'updates',
      'worker_reports',
      'workers',
    ]);
  });
});
