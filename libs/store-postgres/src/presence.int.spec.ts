import { afterAll, describe, expect, it } from 'vitest';
import { PRESENCE_APPLICATION_PREFIX, postgresStore } from './index.js';
import {
  TestSchemas,
  admin,
  backendsOf,
  terminate,
  uniqueName,
  url,
  waitFor,
} from './test-support.spec-helper.js';

const schemas = new TestSchemas();
afterAll(() => schemas.dropAll());

const LONG_TTL_MS = 30_000;

/** The pid of the worker's presence session, once there is exactly one. */
async function presencePid(workerId: string): Promise<number> {
  let pid = 0;
  await waitFor(`one presence session of ${workerId}`, async () => {
    const backends = await backendsOf(`${PRESENCE_APPLICATION_PREFIX}${workerId}`);
    pid = backends.length === 1 ? (backends[0]?.pid ?? 0) : 0;
    return pid !== 0;
  });
  return pid;
}

describe('postgres store: presence sessions', () => {
  it('reconnects a terminated presence session by itself and is listed live again', async () => {
    const schema = schemas.name();
    const store = postgresStore({ url, schema, poolSize: 2 });
    const observer = postgresStore({ url, schema, poolSize: 2 });
    try {
      const workerId = uniqueName('worker');
      await store.presence.register(workerId);
      const before = await presencePid(workerId);
      await terminate([{ pid: before }]);
      await waitFor('a new presence session', async () => {
        const backends = await backendsOf(`${PRESENCE_APPLICATION_PREFIX}${workerId}`);
        return backends.length === 1 && backends[0]?.pid !== before;
      });
      await waitFor('the worker to be live again', async () =>
        (await observer.presence.live()).includes(workerId),
      );
    } finally {
      await Promise.all([store.close(), observer.close()]);
    }
  });

  describe('while the presence session cannot come back', () => {
    const role = uniqueName('baton_presence');
    afterAll(async () => {
      await admin(`DROP OWNED BY ${role}`).catch(() => undefined);
      await admin(`DROP ROLE IF EXISTS ${role}`);
    });

    it('counts the worker dead, hands its runs on, and re-registers it once it reconnects', async () => {
      const schema = schemas.name();
      const reaper = postgresStore({ url, schema, poolSize: 2 });
      await reaper.connect();
      // The worker's store logs in as a role of its own, so the test can refuse its reconnects.
      await admin(`CREATE ROLE ${role} LOGIN`);
      await admin(`GRANT USAGE ON SCHEMA "${schema}" TO ${role}`);
      await admin(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema}" TO ${role}`);
      await admin(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA "${schema}" TO ${role}`);
      const roleUrl = new URL(url);
      roleUrl.username = role;
      const worker = postgresStore({ url: roleUrl.toString(), schema, poolSize: 2 });
      try {
        const workerId = uniqueName('worker');
        await worker.presence.register(workerId);
        const { epoch } = (await worker.leases.acquire('orphan', workerId, LONG_TTL_MS)) as { epoch: number };

        await admin(`ALTER ROLE ${role} NOLOGIN`);
        await terminate([{ pid: await presencePid(workerId) }]);
        let reaped: string[] = [];
        await waitFor('the dead worker to be reaped', async () => {
          reaped = await reaper.presence.reapDead(10, LONG_TTL_MS);
          return reaped.length > 0;
        });
        expect(reaped).toEqual(['orphan']);
        expect(await reaper.presence.live()).not.toContain(workerId);
        expect(
          await admin('SELECT 1 FROM "' + schema + '".workers WHERE worker_id = $1', [workerId]),
        ).toEqual([]);
        // Its pool still works, but the run is no longer its own.
        expect(await worker.leases.renew([{ runId: 'orphan', epoch }], LONG_TTL_MS)).toEqual([
          { runId: 'orphan', ok: false, cancelRequested: false },
        ]);

        await admin(`ALTER ROLE ${role} LOGIN`);
        await waitFor('the worker to be live again', async () =>
          (await reaper.presence.live()).includes(workerId),
        );
        expect(await reaper.presence.reapDead(10, LONG_TTL_MS)).toEqual([]);
        expect(await reaper.leases.get('orphan')).toMatchObject({ owner: null, state: 'held', epoch });
      } finally {
        await Promise.all([worker.close(), reaper.close()]);
      }
    });
  });

  it('hands on no run for a missing presence lock in the grace after the server changed (a failover, a restart)', async () => {
    const schema = schemas.name();
    const reaper = postgresStore({ url, schema, poolSize: 2 });
    const worker = postgresStore({ url, schema, poolSize: 2 });
    try {
      const workerId = uniqueName('worker');
      await worker.presence.register(workerId);
      await worker.leases.acquire('held-by-worker', workerId, LONG_TTL_MS);
      // The first scan records the server's incarnation as old: no grace on a new schema.
      expect(await reaper.presence.reapDead(10, LONG_TTL_MS)).toEqual([]);
      // What a promoted standby (new timeline) or a restarted server (new start time) looks like
      // to the next scan, as the worker's presence session is gone with the old server.
      await admin(`UPDATE "${schema}".server_incarnation SET incarnation = 'a-server-that-is-gone'`);
      await worker.close();
      await waitFor(
        'the worker to be listed dead',
        async () => !(await reaper.presence.live()).includes(workerId),
      );
      expect(await reaper.presence.reapDead(10, LONG_TTL_MS)).toEqual([]);
      expect(await reaper.presence.reapDead(10, LONG_TTL_MS)).toEqual([]);
      expect(await reaper.leases.get('held-by-worker')).toMatchObject({ owner: workerId, state: 'held' });
      // Once the grace is over, a worker still without its lock is dead and its run handed on.
      await admin(`UPDATE "${schema}".server_incarnation SET changed_at = 0`);
      expect(await reaper.presence.reapDead(10, LONG_TTL_MS)).toEqual(['held-by-worker']);
    } finally {
      await Promise.all([worker.close(), reaper.close()]);
    }
  });

  it('names its sessions itself, whatever application_name the URL gives', async () => {
    const schema = schemas.name();
    const named = new URL(url);
    named.searchParams.set('application_name', 'from-url');
    const store = postgresStore({ url: named.toString(), schema, poolSize: 1 });
    try {
      const workerId = uniqueName('worker');
      await store.presence.register(workerId);
      expect(await backendsOf(`${PRESENCE_APPLICATION_PREFIX}${workerId}`)).toHaveLength(1);
      expect(await backendsOf(`baton-store:${schema}`)).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('ends the presence session and forgets the worker on unregister', async () => {
    const store = schemas.store();
    try {
      const workerId = uniqueName('worker');
      await store.presence.register(workerId);
      await presencePid(workerId);
      await store.presence.unregister(workerId);
      expect(await store.presence.live()).toEqual([]);
      expect(await backendsOf(`${PRESENCE_APPLICATION_PREFIX}${workerId}`)).toEqual([]);
      await store.presence.register(workerId);
      expect(await store.presence.live()).toEqual([workerId]);
    } finally {
      await store.close();
    }
  });

  it('refuses a worker id another live connection holds, after connectTimeoutMs', async () => {
    const schema = schemas.name();
    const first = postgresStore({ url, schema, poolSize: 1 });
    const second = postgresStore({ url, schema, poolSize: 1, connectTimeoutMs: 300 });
    try {
      await first.presence.register('twin');
      const err = await second.presence.register('twin').catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'PresenceConflictError', code: 'BATON_PG_PRESENCE_CONFLICT' });
      expect((err as Error).message).toContain("worker id 'twin'");
      expect(await second.presence.live()).toEqual(['twin']);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
