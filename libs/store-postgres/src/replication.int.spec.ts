/**
 * The synchronous-standby guard against a real server: the shared test server has no standby,
 * so a store that requires one refuses it before creating anything, and the session setting the
 * store asks for is the one its connections have. (The cluster crash spec, apps/worker's
 * cluster-postgres.cluster.int.spec.ts, shows the guard accepting a primary with a synchronous standby
 * and refusing the promoted one until a standby joins again.)
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { clientConfig } from './db.js';
import { postgresStore, resolvePostgresStoreOptions } from './index.js';
import { readReplicationSettings } from './replication.js';
import { TestSchemas, admin, url } from './test-support.spec-helper.js';

const schemas = new TestSchemas();
afterAll(() => schemas.dropAll());

describe('postgres store: synchronous standby guard', () => {
  it('refuses a server without a synchronous standby, naming the setting, and creates nothing', async () => {
    const schema = schemas.name();
    const store = postgresStore({ url, schema, requireSynchronousStandby: true });
    let error: (Error & { code?: string; retryable?: boolean }) | undefined;
    try {
      await store.connect();
    } catch (err) {
      error = err as Error;
    } finally {
      await store.close();
    }
    expect(error?.code).toBe('BATON_PG_NOT_SYNCHRONOUS');
    expect(error?.retryable).toBe(false);
    expect(error?.message).toMatch(/BATON_POSTGRES_REQUIRE_SYNC/);
    expect(error?.message).toMatch(/synchronous_standby_names is empty/);
    const created = await admin('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]);
    expect(created).toEqual([]);
  });

  it("gives the store's sessions the synchronous_commit it was asked for", async () => {
    for (const level of ['local', 'remote_apply'] as const) {
      const client = new pg.Client(
        clientConfig(resolvePostgresStoreOptions({ url, synchronousCommit: level }), 'x'),
      );
      await client.connect();
      try {
        const settings = await readReplicationSettings(client);
        expect(settings.synchronousCommit).toBe(level);
        expect(settings.inRecovery).toBe(false);
      } finally {
        await client.end();
      }
    }
  });

  it('connects and works without the requirement on the same server', async () => {
    const store = schemas.store({ synchronousCommit: 'local' });
    try {
      await store.connect();
      expect(await store.runs.get('missing')).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
