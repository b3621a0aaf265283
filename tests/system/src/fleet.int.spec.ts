/**
 * The fleet view on real worker processes, NATS and Redis or Postgres: `client.fleet.workers()`
 * lists each worker with where it runs, the workflow versions it registers, the runs it holds and
 * its presence; a SIGKILLed worker drops out once its report expires, and a SIGTERMed one is
 * forgotten when it stops.
 */
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, type FleetWorker } from '@baton/client';
import type { CrashEnvironment } from '@baton/testing/crash';
import { REPO_ROOT, WorkerProcess } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

const FLEET_WORKFLOW_MODULE = resolve(REPO_ROOT, 'libs/testing/src/crash/fleet-workflows.ts');
const WORKER_VERSION = (
  JSON.parse(readFileSync(resolve(REPO_ROOT, 'libs/worker/package.json'), 'utf8')) as { version: string }
).version;

/** Lease 2 s, heartbeat 500 ms: a report lives max(3 × 500, 2000) = 2 s. */
const TIMING = { BATON_LEASE_MS: '2000', BATON_HEARTBEAT_MS: '500' };

let env: CrashEnvironment | undefined;
const processes: WorkerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.alive) p.signal('SIGKILL');
    await p.exited;
  }
  await env?.transport.close();
  await env?.store.close();
  await env?.dispose();
  env = undefined;
});

function spawnWorker(id: string, extra: Record<string, string> = {}): WorkerProcess {
  const worker = new WorkerProcess(id, {
    ...env!.workerEnv,
    ...TIMING,
    BATON_WORKFLOWS: FLEET_WORKFLOW_MODULE,
    BATON_WORKER_ID: id,
    POD_NAME: `pod-${id}`,
    ...extra,
  });
  processes.push(worker);
  return worker;
}

const byId = (workers: FleetWorker[], id: string) => workers.find((w) => w.workerId === id);

describe.each(['redis', 'postgres'] as const)('fleet view on worker processes (nats + %s)', (storeKind) => {
  it(
    'lists live workers with their workflow versions and held runs; a SIGKILLed one drops out, a stopped one is forgotten',
    { timeout: 90_000 },
    async () => {
      env = await crashEnvironment(storeKind)(`f${randomBytes(5).toString('hex')}`, {});
      await env.transport.connect();
      await env.store.connect();
      const client = new Client({ transport: env.transport, store: env.store });
      const a = spawnWorker('fleet-a', { BATON_CONCURRENCY: '3' });
      const b = spawnWorker('fleet-b', { BATON_CONCURRENCY: '5' });
      await Promise.all([a.ready(), b.ready()]);

      const workers = await client.fleet.workers();
      expect(workers.map((w) => w.workerId)).toEqual(['fleet-a', 'fleet-b']);
      expect(byId(workers, 'fleet-a')).toMatchObject({
        host: 'pod-fleet-a',
        pid: a.pid,
        batonVersion: WORKER_VERSION,
        workflows: [
          { name: 'fleet_orders', versions: [1, 2] },
          { name: 'fleet_refunds', versions: [1] },
        ],
        concurrency: 3,
        draining: false,
        connected: true,
      });
      expect(byId(workers, 'fleet-b')).toMatchObject({ pid: b.pid, concurrency: 5, connected: true });
      // A report with no presence behind it (a worker whose connection dropped) is not connected.
      await env.store.fleet.report({ ...byId(workers, 'fleet-b')!, workerId: 'fleet-ghost' }, 60_000);
      expect(byId(await client.fleet.workers(), 'fleet-ghost')).toMatchObject({ connected: false });
      await env.store.fleet.forget('fleet-ghost');

      // Four runs that each hold their worker for a while: the reports count them.
      for (let i = 0; i < 4; i++) await client.start({ name: 'fleet_orders', version: 2 }, 4_000);
      // Once renewed, a holder's report carries its last renewal (on the store's clock).
      await expect
        .poll(
          async () => {
            const listed = await client.fleet.workers();
            const held = listed.reduce((sum, w) => sum + w.runsHeld, 0);
            return { held, renewed: listed.every((w) => w.runsHeld === 0 || w.lastRenewalAt !== null) };
          },
          { timeout: 20_000, interval: 200 },
        )
        .toEqual({ held: 4, renewed: true });

      a.signal('SIGKILL');
      await a.exited;
      await expect
        .poll(async () => byId(await client.fleet.workers(), 'fleet-a'), { timeout: 20_000, interval: 200 })
        .toBeUndefined();
      expect(byId(await client.fleet.workers(), 'fleet-b')).toMatchObject({ connected: true });

      b.signal('SIGTERM');
      expect((await b.exited).code).toBe(0);
      expect(await client.fleet.workers()).toEqual([]);
    },
  );
});
