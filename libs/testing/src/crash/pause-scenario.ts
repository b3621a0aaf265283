/**
 * Pause on real worker processes, a real bus and a real store. A run asked to pause while its slow
 * activity is in flight stops once that activity's result is journaled. And a paused run survives
 * the SIGKILL of its owner and stays paused: the owner is SIGKILLed before that activity ends. No worker, reaper or dead-worker scan may run it again
 * (checked over several lease periods); resumed, it completes on another worker, and the ledger
 * (the outside world's record of effects) shows no step applied twice.
 *
 * Each adapter pair calls it from its own spec: `describePauseCrash('nats+redis', environment)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@baton/client';
import { CrashWorld, type CrashEnvironmentFactory, NO_VIOLATIONS } from './harness.js';
import { readJournal } from './invariants.js';

/** Lease of the scenario's workers: short, so "several lease periods" is a few seconds. */
const LEASE_MS = 2_000;
/** How long the paused run is watched after it paused: several leases, reaper scans included. */
const WATCH_MS = 3 * LEASE_MS;
/**
 * Each step of the run takes this long, so the pause request and the kill, sent as soon as the
 * first step is seen started, surely land inside it.
 */
const STEP_MS = 2_500;

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

export function describePauseCrash(name: string, factory: CrashEnvironmentFactory): void {
  describe(`pause on worker processes: ${name}`, () => {
    let world: CrashWorld | undefined;
    let client: Client | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
      client = undefined;
    });

    it(
      'pauses a run mid-activity after that activity is journaled, starts no further step, and completes on resume',
      { timeout: 180_000 },
      async () => {
        world = await CrashWorld.create(factory, {
          workerEnv: { BATON_LEASE_MS: String(LEASE_MS), BATON_HEARTBEAT_MS: '500' },
        });
        const w = world;
        client = new Client({ transport: w.env.transport, store: w.env.store });
        await w.fleet.spawn();
        const [started] = await w.enqueue(1, { steps: 3, minDelayMs: STEP_MS, maxDelayMs: STEP_MS + 1 });
        const runId = started!.runId;
        await until(async () => (await w.ledger.busyPids()).size > 0, 30_000, 'the first step to start');

        expect(await client.pause(runId)).toBe('pause-requested');
        await until(
          async () => (await w.env.store.getRun(runId))?.status === 'paused',
          30_000,
          `run ${runId} to pause\n${w.fleet.describe()}`,
        );
        // The step in flight finished and is journaled; the next one never started.
        const atPause = await w.ledger.executions();
        expect(atPause.map((e) => [e.step, e.finishedAt !== null])).toEqual([[0, true]]);
        const journal = (await readJournal(w.env.transport, runId)).map((p) => p.entry);
        expect(journal).toContainEqual(expect.objectContaining({ type: 'ActivityCompleted', seq: 0 }));
        expect(journal.some((e) => e.type === 'ActivityStarted' && e.seq === 1)).toBe(false);
        expect(w.fleet.all[0]!.logs.some((l) => l.msg === 'run paused')).toBe(true);
        await sleep(WATCH_MS);
        expect((await w.env.store.getRun(runId))?.status).toBe('paused');
        expect((await w.ledger.executions()).length).toBe(1);

        expect(await client.resume(runId)).toBe(true);
        await w.waitForAll(90_000);
        expect(await w.violations()).toEqual(NO_VIOLATIONS);
        // Every step ran exactly once: the pause cost no re-execution.
        expect((await w.ledger.executions()).map((e) => e.step)).toEqual([0, 1, 2]);
      },
    );

    it(
      'keeps a run paused after its owner is SIGKILLed mid-activity; resumed, it completes elsewhere with no effect twice',
      { timeout: 180_000 },
      async () => {
        world = await CrashWorld.create(factory, {
          workerEnv: { BATON_LEASE_MS: String(LEASE_MS), BATON_HEARTBEAT_MS: '500' },
        });
        const w = world;
        client = new Client({ transport: w.env.transport, store: w.env.store });
        const workers = await Promise.all([w.fleet.spawn(), w.fleet.spawn()]);
        const [started] = await w.enqueue(1, { steps: 3, minDelayMs: STEP_MS, maxDelayMs: STEP_MS + 1 });
        const runId = started!.runId;

        // Whichever worker took the run has its first step in flight.
        await until(async () => (await w.ledger.busyPids()).size > 0, 30_000, 'the first step to start');
        const [busyPid] = [...(await w.ledger.busyPids())];
        const owner = workers.find((p) => p.pid === busyPid);
        if (owner === undefined) throw new Error(`no worker of this test has pid ${busyPid}`);
        const survivor = workers.find((p) => p !== owner)!;

        expect(await client.pause(runId, 'crash-suite pause')).toBe('pause-requested');
        owner.signal('SIGKILL');
        await owner.exited;
        const inFlightAtKill = (await w.ledger.executions()).filter((e) => e.finishedAt === null);
        expect(inFlightAtKill.map((e) => e.step)).toEqual([0]);

        // The survivor reaps the dead owner's lease; the claim that follows pauses the run.
        await until(
          async () => (await w.env.store.getRun(runId))?.status === 'paused',
          30_000,
          `run ${runId} to pause after its owner died\n${w.fleet.describe()}`,
        );
        const executionsWhenPaused = (await w.ledger.executions()).length;
        await sleep(WATCH_MS);
        const described = await client.describe(runId);
        expect(described.status).toBe('paused');
        expect(described.lease).toMatchObject({
          state: 'paused',
          owner: null,
          pauseReason: 'crash-suite pause',
        });
        expect((await w.ledger.executions()).length).toBe(executionsWhenPaused);
        expect(survivor.logs.some((l) => l.msg === 'reaped leases')).toBe(true);

        expect(await client.resume(runId)).toBe(true);
        await w.waitForAll(90_000);
        expect(await w.violations()).toEqual(NO_VIOLATIONS);
        const executions = await w.ledger.executions();
        // Step 0 started twice (killed, then after the resume), applied once; the others ran once.
        expect(executions.filter((e) => e.step === 0).length).toBe(2);
        expect(executions.filter((e) => e.step > 0 && e.pid !== survivor.pid)).toEqual([]);
        expect(executions.filter((e) => e.step > 0).length).toBe(2);
      },
    );
  });
}
