import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { STORE_APPLICATION_PREFIX } from './db.js';
import { postgresStore } from './index.js';
import { TestSchemas, admin, backendsOf, terminate, url, waitFor } from './test-support.spec-helper.js';

const schemas = new TestSchemas();
afterAll(() => schemas.dropAll());

const CLOSED = { name: 'BatonError', code: 'BATON_CLOSED' };

describe('postgres store: lifecycle and isolation', () => {
  it('keeps two schemas on one database apart', async () => {
    const a = schemas.store();
    const b = schemas.store();
    try {
      const run = {
        runId: 'same-id',
        workflow: 'w',
        version: 1,
        input: { from: 'a' },
        idempotencyKey: 'key',
      };
      expect((await a.runs.create(run)).created).toBe(true);
      expect(await b.runs.get('same-id')).toBeUndefined();
      expect((await b.runs.create({ ...run, input: { from: 'b' } })).created).toBe(true);
      expect((await a.runs.get('same-id'))?.input).toEqual({ from: 'a' });
      await a.leases.acquire('same-id', 'worker-a', 30_000);
      expect(await b.leases.acquire('same-id', 'worker-b', 30_000)).toMatchObject({ ok: true, epoch: 1 });
      await a.presence.register('w');
      expect(await b.presence.live()).toEqual([]);
      expect(await a.presence.live()).toEqual(['w']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('connects on first use and refuses everything after close', async () => {
    const store = schemas.store();
    expect(await store.runs.get('nothing')).toBeUndefined();
    await store.close();
    await store.close();
    await expect(store.connect()).rejects.toMatchObject(CLOSED);
    await expect(store.leases.acquire('r', 'w', 1_000)).rejects.toMatchObject(CLOSED);
    await expect(store.leases.now()).rejects.toMatchObject(CLOSED);
    await expect(store.presence.register('w')).rejects.toMatchObject(CLOSED);
  });

  it('survives its pooled connections being killed from outside', async () => {
    const schema = schemas.name();
    const store = postgresStore({ url, schema, poolSize: 2 });
    try {
      await store.connect();
      await Promise.all([store.runs.get('a'), store.runs.get('b')]);
      const killed = await backendsOf(`${STORE_APPLICATION_PREFIX}${schema}`);
      expect(killed.length).toBeGreaterThan(0);
      await terminate(killed);
      await waitFor('the killed backends to be gone', async () => {
        const left = await admin(`SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1::int[])`, [
          killed.map((k) => k.pid),
        ]);
        return left.length === 0;
      });
      // The idle clients' errors were absorbed; the pool opens new connections on demand.
      await waitFor('the store to answer again', async () => {
        try {
          return Number.isFinite(await store.leases.now());
        } catch (err) {
          expect(err).toMatchObject({ code: 'BATON_PG_QUERY', retryable: true });
          return false;
        }
      });
      expect(await store.leases.acquire('after', 'worker-a', 30_000)).toMatchObject({ ok: true });
    } finally {
      await store.close();
    }
  });

  it('has the server cancel a statement that runs past statementTimeoutMs', async () => {
    const schema = schemas.name();
    const store = postgresStore({ url, schema, poolSize: 1, statementTimeoutMs: 200 });
    const blocker = new pg.Client({ connectionString: url });
    try {
      await store.leases.acquire('blocked', 'worker-a', 30_000);
      // Another session holds the lease row, so the next acquire waits on its lock.
      await blocker.connect();
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM "${schema}".leases WHERE run_id = 'blocked' FOR UPDATE`);
      const err = await store.leases.acquire('blocked', 'worker-b', 30_000).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'PostgresStoreError', code: 'BATON_PG_QUERY', retryable: true });
      expect((err as Error).message).toContain('statement timeout');
    } finally {
      await blocker.end();
      await store.close();
    }
  });
});
