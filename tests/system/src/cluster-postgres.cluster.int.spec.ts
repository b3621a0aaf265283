/**
 * The Postgres primary dies under load (issue 22): real worker processes on the shared NATS bus,
 * their store on a primary with a synchronous streaming standby behind the cluster's endpoint
 * (infra/clusters/postgres, started here, always stopped in afterAll). Mid-run the primary's
 * postmaster is SIGKILLed, the standby promoted as a failover manager would, and the endpoint
 * follows. Checked from the outside, as in the worker crash suite: every run ends with the right
 * output, no run is lost, no effect is duplicated, no step runs again after its completion was
 * durable, every zombie write is fenced. The crash ledger lives on the shared server (5432),
 * never on the cluster that is killed.
 *
 * How long writes stalled and how many runs failed over are printed, never asserted.
 *
 * A second part shows why the store asks for a synchronous standby: with the standby cut off, an
 * asynchronous primary acknowledges a lease epoch the promoted standby never receives, and the
 * same epoch is handed to a second worker; a synchronous primary never acknowledges it.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '@baton/store-postgres';
import { startPostgresCluster, type PostgresCluster } from '@baton/testing/clusters';
import { CrashWorld, NO_VIOLATIONS } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

const RUNS = 60;
/** What a failover manager takes to decide the primary is dead (Patroni's loop is ~10 s; less here). */
const DETECTION_MS = 1_000;

/** One statement on a fresh connection (the endpoint drops pooled ones on failover). */
async function once<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Writes through the endpoint every 100 ms (txid_current() needs a writable primary) and keeps
 * the longest time between two successful writes: how long the store could take no write.
 */
function writeProbe(url: string): { stop(): Promise<{ longestGapMs: number; failures: number }> } {
  let running = true;
  let lastOk = Date.now();
  let longestGapMs = 0;
  let failures = 0;
  const loop = (async () => {
    while (running) {
      try {
        await once(url, 'SELECT txid_current()');
        const now = Date.now();
        longestGapMs = Math.max(longestGapMs, now - lastOk);
        lastOk = now;
      } catch {
        failures++;
      }
      await sleep(100);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { longestGapMs, failures };
    },
  };
}

/**
 * CrashWorld.waitForAll, read through the test's own store: a read on a connection the failover
 * cut fails as a retryable store error, which is what a client sees too; read again.
 */
async function waitForAllAcrossFailover(w: CrashWorld, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await w.waitForAll(Math.max(0, deadline - Date.now()));
      return;
    } catch (err) {
      if ((err as { retryable?: unknown }).retryable !== true || Date.now() > deadline) throw err;
      await sleep(250);
    }
  }
}

async function requireSyncConnect(url: string): Promise<{ ok: true } | { ok: false; code: unknown }> {
  const schema = `sync_${randomBytes(5).toString('hex')}`;
  const store = postgresStore({ url, schema, poolSize: 1, requireSynchronousStandby: true });
  try {
    await store.connect();
    return { ok: true };
  } catch (err) {
    return { ok: false, code: (err as { code?: unknown }).code };
  } finally {
    await store.close();
    await once(url, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  }
}

describe('postgres cluster: the primary is SIGKILLed under load and the standby promoted', () => {
  let cluster: PostgresCluster | undefined;
  let world: CrashWorld | undefined;
  beforeAll(async () => {
    cluster = await startPostgresCluster({ synchronous: true });
  }, 120_000);
  afterAll(async () => {
    await world?.dispose().catch(() => undefined);
    await cluster?.stop();
  }, 60_000);

  it('has the standby synchronous, so a store requiring it connects through the endpoint', async () => {
    const c = cluster!;
    const standbys = await once<{ application_name: string; sync_state: string }>(
      c.nodeUrl(c.primary),
      'SELECT application_name, sync_state FROM pg_stat_replication',
    );
    expect(standbys).toEqual([{ application_name: `node${c.standby}`, sync_state: 'sync' }]);
    expect(await requireSyncConnect(c.url)).toEqual({ ok: true });
  }, 60_000);

  it(
    'completes every run exactly once in effect across the failover, with zombie writes fenced',
    { timeout: 180_000 },
    async () => {
      const c = cluster!;
      world = await CrashWorld.create(
        crashEnvironment('postgres', 'nats', { BATON_POSTGRES_REQUIRE_SYNC: '1' }),
        {
          overrides: { storeUrl: c.url },
          workerEnv: { BATON_CONCURRENCY: String(RUNS) },
        },
      );
      const w = world;
      const workers = await Promise.all([w.fleet.spawn(), w.fleet.spawn(), w.fleet.spawn()]);
      await w.enqueue(RUNS, { steps: 10, minDelayMs: 300, maxDelayMs: 600 });
      await w.waitForExecutions(workers[0]!.pid, 5);

      const probe = writeProbe(c.url);
      await sleep(500);
      const old = c.primary;
      const killedAt = Date.now();
      await c.kill(old);
      await sleep(DETECTION_MS);
      await c.promote(c.standby);
      const promotedAt = Date.now();
      await waitForAllAcrossFailover(w, 150_000);
      const stall = await probe.stop();

      expect(await w.violations()).toEqual(NO_VIOLATIONS);
      // The workers lived through it: a lost store is a retry, never a crash.
      expect(w.fleet.alive).toHaveLength(3);

      const executions = await w.ledger.executions();
      // In flight across the failover: ran before the kill and after the promotion. Moved: the
      // first activity after the promotion ran on another worker than the last one before the kill.
      const lastBefore = new Map<string, number>();
      const firstAfter = new Map<string, number>();
      for (const e of executions) {
        if (e.startedAt < killedAt) lastBefore.set(e.runId, e.pid);
        else if (e.startedAt >= promotedAt && !firstAfter.has(e.runId)) firstAfter.set(e.runId, e.pid);
      }
      const across = [...lastBefore.keys()].filter((runId) => firstAfter.has(runId));
      const moved = across.filter((runId) => lastBefore.get(runId) !== firstAfter.get(runId)).length;
      // Some runs must have been in flight across the failover, or nothing was tested.
      expect(across.length).toBeGreaterThan(0);
      const logged = new Map<string, number>();
      for (const line of workers.flatMap((p) => p!.logs)) {
        if (line.level < 40 || line.time === undefined || Number(line.time) < killedAt) continue;
        logged.set(line.msg, (logged.get(line.msg) ?? 0) + 1);
      }
      console.log(
        `[cluster postgres] ${RUNS} runs; primary SIGKILLed, standby promoted ${promotedAt - killedAt} ms later ` +
          `(${DETECTION_MS} ms of it detection); writes through the endpoint stalled ${stall.longestGapMs} ms ` +
          `(${stall.failures} failed probe writes); ${across.length} runs in flight across the failover, ${moved} of them moved to another worker; 0 lost, 0 duplicated`,
      );
      const reaped = { expired: 0, 'dead-worker': 0 } as Record<string, number>;
      for (const line of workers.flatMap((p) => p!.logs)) {
        if (line.msg !== 'reaped leases' || Number(line.time) < killedAt) continue;
        reaped[String(line.cause)] = (reaped[String(line.cause)] ?? 0) + (line.runIds as unknown[]).length;
      }
      console.log(
        `[cluster postgres] leases reaped after the kill: ${reaped.expired} expired, ${reaped['dead-worker']} of workers seen dead`,
      );
      console.log(
        `[cluster postgres] worker warnings and errors after the kill: ${
          [...logged].map(([msg, n]) => `${n}× ${msg}`).join('; ') || 'none'
        }`,
      );
    },
  );

  it('refuses the promoted primary while it has no standby, and accepts it once the old primary rejoins', async () => {
    const c = cluster!;
    // node.sh promote cleared synchronous_standby_names: with no standby left, commits would hang.
    expect(await requireSyncConnect(c.url)).toEqual({ ok: false, code: 'BATON_PG_NOT_SYNCHRONOUS' });
    await c.start(c.standby);
    expect(await requireSyncConnect(c.url)).toEqual({ ok: true });
  }, 120_000);
});

/**
 * Why the synchronous standby is required, shown with the store's own calls: the standby is cut
 * off from the primary (its primary_conninfo pointed nowhere, the walsender ended), a lease epoch
 * is handed to worker B, the primary dies and the standby is promoted; then worker C asks for the
 * same lease.
 */
async function epochAfterFailover(synchronous: boolean): Promise<{ b: string; c: unknown }> {
  const c = await startPostgresCluster({ synchronous });
  const schema = `epochs_${randomBytes(5).toString('hex')}`;
  const before = postgresStore({ url: c.url, schema, poolSize: 2 });
  try {
    await before.connect();
    expect(await before.leases.acquire('run', 'worker-a', 200)).toMatchObject({ ok: true, epoch: 1 });
    // Epoch 1 is on the standby before it is cut off.
    const [primaryAt] = await once<{ lsn: string }>(
      c.nodeUrl(c.primary),
      'SELECT pg_current_wal_lsn()::text AS lsn',
    );
    for (let i = 0; ; i++) {
      const [standby] = await once<{ behind: boolean }>(
        c.nodeUrl(c.standby),
        `SELECT pg_last_wal_replay_lsn() < '${primaryAt?.lsn}'::pg_lsn AS behind`,
      );
      if (standby?.behind === false) break;
      if (i > 100) throw new Error('the standby did not replay epoch 1 within 10 s');
      await sleep(100);
    }
    await once(c.nodeUrl(c.standby), "ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 port=1'");
    await once(c.nodeUrl(c.standby), 'SELECT pg_reload_conf()');
    for (let i = 0; ; i++) {
      await once(c.nodeUrl(c.primary), 'SELECT pg_terminate_backend(pid) FROM pg_stat_replication');
      const senders = await once(c.nodeUrl(c.primary), 'SELECT 1 FROM pg_stat_replication');
      if (senders.length === 0) break;
      if (i > 100) throw new Error('the standby kept streaming for 10 s after it was cut off');
      await sleep(100);
    }

    await sleep(300); // worker A's lease (200 ms) has expired
    let b = 'pending';
    const acquiring = before.leases.acquire('run', 'worker-b', 30_000).then(
      (result) => (b = result.ok ? `acknowledged epoch ${result.epoch}` : `refused: ${result.reason}`),
      () => (b = 'failed'),
    );
    // Long enough for an asynchronous commit to be acknowledged; a synchronous one waits forever.
    await sleep(1_500);
    await c.kill(c.primary);
    await acquiring;
    await c.promote(c.standby);

    const after = postgresStore({ url: c.url, schema, poolSize: 2 });
    try {
      await sleep(300);
      return { b, c: await after.leases.acquire('run', 'worker-c', 30_000) };
    } finally {
      await after.close();
    }
  } finally {
    await before.close();
    await c.stop();
  }
}

describe('postgres cluster: an acknowledged epoch and the standby that is promoted', () => {
  it('with an asynchronous standby, hands the epoch a worker was told is its own to a second worker', async () => {
    const { b, c } = await epochAfterFailover(false);
    expect(b).toBe('acknowledged epoch 2');
    // The promoted standby never received it: worker C is told epoch 2 as well.
    expect(c).toMatchObject({ ok: true, epoch: 2 });
  }, 120_000);

  it('with a synchronous standby, never acknowledges what the standby has not got, so no epoch is told twice', async () => {
    const { b, c } = await epochAfterFailover(true);
    // Worker B's commit waited for the standby until the primary died: B was never told epoch 2.
    expect(b).toBe('failed');
    expect(c).toMatchObject({ ok: true, epoch: 2 });
  }, 120_000);
});
