import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { Store } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from '@baton/client';
import { Worker } from './index.js';
import { withCapability } from './capabilities.spec-helper.js';
import { reportedHost, reportTtlMs } from './fleet/fleet-report.js';
import type { Logger } from './logger.js';
import { FAST, fleet, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** An activity that waits until the test lets it go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const activity = defineActivity({ name: 'gated', run: async () => opened });
  return { activity, open };
}

describe('worker fleet report (memory adapters)', () => {
  it('lists a running worker with its workflow versions and the runs it holds, draining on stop, gone after', async () => {
    const { activity, open } = gate();
    const orders = (version: number) =>
      defineWorkflow({
        name: 'orders',
        version,
        run: async (ctx) => {
          await ctx.run(activity, null);
          return version;
        },
      });
    const refunds = defineWorkflow({ name: 'refunds', version: 1, run: async () => 'ok' });
    current = fleet({ workflows: [orders(3), refunds, orders(1)], concurrency: 7 });
    const { worker } = await current.spawn();
    const { store, client } = current;

    const [started] = await store.fleet.list();
    expect(started).toMatchObject({
      workerId: worker.workerId,
      host: reportedHost(),
      pid: process.pid,
      batonVersion: PACKAGE_VERSION,
      workflows: [
        { name: 'orders', versions: [1, 3] },
        { name: 'refunds', versions: [1] },
      ],
      lastRenewalAt: null,
      runsHeld: 0,
      concurrency: 7,
      draining: false,
    });
    expect(started!.expiresAt - started!.lastSeenAt).toBe(reportTtlMs(FAST.heartbeatMs!, FAST.leaseMs!));

    const run = await client.start({ name: 'orders', version: 3 }, null);
    await until(
      async () => {
        const [w] = await store.fleet.list();
        return w?.runsHeld === 1 && w.lastRenewalAt !== null;
      },
      5_000,
      'the report to show the held run and a renewal',
    );
    const [holding] = await store.fleet.list();
    expect(holding!.lastRenewalAt).toBeGreaterThanOrEqual(started!.lastSeenAt);
    expect(holding!.lastRenewalAt).toBeLessThanOrEqual(await store.leases.now());

    // stop() waits for the in-flight activity: the fleet sees the worker draining meanwhile.
    const stopping = worker.stop();
    await until(async () => (await store.fleet.list())[0]?.draining === true, 5_000, 'draining report');
    open();
    await stopping;
    expect(await store.fleet.list()).toEqual([]);
    // Kept as departed (an hour by default): handed off, with the run it held when told to stop.
    const [departed, ...others] = await store.fleet.departed();
    expect(others).toEqual([]);
    expect(departed).toMatchObject({
      workerId: worker.workerId,
      ended: 'handed-off',
      runsHeld: 1,
      runs: [run.runId],
      draining: true,
    });
    expect(departed!.keptUntil - departed!.endedAt).toBe(3_600_000);
    // Another worker finishes the handed-off run; the fleet then lists only it.
    const next = await current.spawn();
    expect(await run.result({ timeoutMs: 5_000 })).toBe(3);
    expect((await store.fleet.list()).map((w) => w.workerId)).toEqual([next.worker.workerId]);
    // Where the run went, read when listed.
    const [listed] = await client.fleet.departed();
    expect(listed!.heldRuns).toEqual([{ runId: run.runId, status: 'completed', owner: null }]);
  });

  it('keeps no departed record with departedRetentionMs 0', async () => {
    const wf = defineWorkflow({ name: 'idle', version: 1, run: async () => null });
    current = fleet({ workflows: [wf] });
    const { worker } = await current.spawn({ departedRetentionMs: 0 });
    await worker.stop();
    expect(await current.store.fleet.list()).toEqual([]);
    expect(await current.store.fleet.departed()).toEqual([]);
  });

  it('reports the pod name, else HOSTNAME, else the OS host name', () => {
    expect(reportedHost({ POD_NAME: 'pod-a', K8S_POD_NAME: 'pod-b', HOSTNAME: 'h' })).toBe('pod-a');
    expect(reportedHost({ K8S_POD_NAME: 'pod-b', HOSTNAME: 'h' })).toBe('pod-b');
    expect(reportedHost({ POD_NAME: '', HOSTNAME: 'h' })).toBe('h');
    expect(reportedHost({})).toBe(hostname());
  });

  it('drops a crashed worker from the listing once its report outlives its time to live', async () => {
    const wf = defineWorkflow({ name: 'idle', version: 1, run: async () => null });
    current = fleet({ workflows: [wf] });
    const a = await current.spawn();
    const b = await current.spawn();
    expect((await current.store.fleet.list()).map((w) => w.workerId)).toEqual(['w1', 'w2']);

    a.crash();
    await until(
      async () => (await current!.store.fleet.list()).every((w) => w.workerId !== a.worker.workerId),
      5_000,
      'the crashed worker to drop out',
    );
    // The live one keeps reporting on every tick, so it is still listed after that time to live.
    const [alive] = await current.store.fleet.list();
    expect(alive?.workerId).toBe(b.worker.workerId);
    // The crashed one is kept as expired, ended when its last report ran out.
    expect(await current.store.fleet.departed()).toEqual([
      expect.objectContaining({ workerId: a.worker.workerId, ended: 'expired', runs: [] }),
    ]);
  });

  it('neither start, renewals, runs nor stop wait on a report that hangs', async () => {
    const base = memoryStore();
    let reports = 0;
    const store = withCapability(base, 'fleet', {
      report: () => {
        reports++;
        return new Promise<never>(() => undefined);
      },
    });
    const slow = defineActivity({
      name: 'slow_past_leases',
      run: async () => new Promise<string>((resolve) => setTimeout(() => resolve('done'), 1_200)),
    });
    const wf = defineWorkflow({ name: 'outlives_leases', version: 1, run: (ctx) => ctx.run(slow, null) });
    const transport = memoryTransport();
    const worker = new Worker({ ...FAST, transport, store, workflows: [wf], workerId: 'hung-report' });
    await worker.start();
    // The run lasts three leases (400 ms): only renewals, never blocked by the report, keep it.
    const run = await new Client({ transport, store: base }).start(wf, null);
    expect(await run.result({ timeoutMs: 5_000 })).toBe('done');
    await worker.stop();
    expect(worker.state).toBe('stopped');
    // One report was sent and never settled: no tick sent another over it.
    expect(reports).toBe(1);
    expect(await base.fleet.list()).toEqual([]);
  });

  it('logs a failing report once per streak and carries on working', async () => {
    const lines: { level: string; msg: string | undefined }[] = [];
    const record =
      (level: string) =>
      (_obj: object, msg?: string): void => {
        lines.push({ level, msg });
      };
    const logger: Logger = {
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    };
    const base = memoryStore();
    let failuresLeft = 4;
    let attempts = 0;
    const store = withCapability(base, 'fleet', {
      report: async (...args: Parameters<Store['fleet']['report']>) => {
        attempts++;
        if (failuresLeft > 0) {
          failuresLeft--;
          throw new Error('store unreachable (test)');
        }
        return base.fleet.report(...args);
      },
    });
    const wf = defineWorkflow({ name: 'simple', version: 1, run: async () => 42 });
    const transport = memoryTransport();
    const worker = new Worker({ ...FAST, transport, store, workflows: [wf], workerId: 'flaky', logger });
    await worker.start();
    try {
      await until(async () => (await base.fleet.list()).length === 1, 5_000, 'a report to go through');
      expect(attempts).toBeGreaterThanOrEqual(5);
      const reportLines = lines.filter((l) => l.msg?.startsWith('fleet report'));
      expect(reportLines).toEqual([
        { level: 'warn', msg: 'fleet report failed; the worker carries on and retries every heartbeat' },
        { level: 'info', msg: 'fleet report written again' },
      ]);
      // The worker ran all along: it completes a run.
      const client = new Client({ transport, store: base });
      const run = await client.start(wf, null);
      expect(await run.result({ timeoutMs: 5_000 })).toBe(42);
    } finally {
      await worker.stop();
    }
    expect(await base.fleet.list()).toEqual([]);
  });
});
