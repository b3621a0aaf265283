/**
 * Updates on real worker processes, a real bus and a real store (docs/updates.md): the owner of a
 * run is SIGKILLed between an update's acceptance and its answer, while the handler's step (a
 * ledger effect under its idempotency key) is in flight. The caller gives up; another worker
 * resumes the run, its replay starts the handler again at the journaled acceptance and runs the
 * step with the same key; the caller's repeat with the same update id gets the kept answer. The
 * ledger (the outside world's record) shows the handler's effect applied once, the run's total
 * counts the update once, and the run completes.
 *
 * Each adapter pair calls it from its own spec: `describeUpdateCrash('nats+redis', environment)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@baton/client';
import { CrashWorld, type CrashEnvironmentFactory } from './harness.js';
import { readJournal } from './invariants.js';
import { UPDATE_STEP_BASE, type CrashAddArgs } from './crash-workflow.js';

/** Lease of the scenario's workers: short, so a lease-expiry resume (a store without presence) is quick too. */
const LEASE_MS = 2_000;
/** The handler's step takes this long, so the kill, sent as soon as the step is seen started, lands inside it. */
const STEP_MS = 2_500;
const UPDATABLE = { name: 'crash_updatable', version: 1 };

async function until(check: () => Promise<boolean>, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await sleep(100);
  }
}

export function describeUpdateCrash(name: string, factory: CrashEnvironmentFactory): void {
  describe(`updates on worker processes: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      "applies an update once when its owner is SIGKILLed between acceptance and answer; the caller's repeat gets the kept answer",
      { timeout: 180_000 },
      async () => {
        world = await CrashWorld.create(factory, {
          workerEnv: {
            BATON_LEASE_MS: String(LEASE_MS),
            BATON_HEARTBEAT_MS: '500',
            BATON_REAP_INTERVAL_MS: '500',
          },
        });
        const w = world;
        const c = new Client({ transport: w.env.transport, store: w.env.store });
        const workers = await Promise.all([w.fleet.spawn(), w.fleet.spawn()]);
        await w.untilPartitionsSpread(workers);
        const run = await c.start(UPDATABLE, { seed: 7 }, { idempotencyKey: `${w.ns}-updatable` });
        await until(
          async () => (await w.env.store.runs.get(run.runId))?.status === 'suspended',
          30_000,
          () => `run ${run.runId} to wait for its signal\n${w.fleet.describe()}`,
        );

        // The caller sends the update and waits; the owner accepts it and starts the handler's step.
        const args: CrashAddArgs = { amount: 5, delayMs: STEP_MS };
        const gaveUp = new AbortController();
        const first = c
          .update(run.runId, 'crash_add', args, {
            updateId: 'add-5',
            timeoutMs: 120_000,
            signal: gaveUp.signal,
          })
          .catch((err: unknown) => err);
        await until(
          async () => (await w.ledger.busyPids()).size > 0,
          30_000,
          () => `the handler's step to start\n${w.fleet.describe()}`,
        );
        const [busyPid] = [...(await w.ledger.busyPids())];
        const owner = workers.find((p) => p.pid === busyPid);
        if (owner === undefined) throw new Error(`no worker of this test has pid ${busyPid}`);
        owner.signal('SIGKILL');
        await owner.exited;
        gaveUp.abort(new Error('the caller gave up'));
        expect(await first).toMatchObject({ message: 'the caller gave up' });

        // Between acceptance and answer: accepted in the journal, nothing kept in the store.
        const atKill = (await readJournal(w.env.transport, run.runId)).map((p) => p.entry);
        expect(atKill.filter((e) => e.type === 'UpdateAccepted')).toHaveLength(1);
        expect(atKill.some((e) => e.type === 'UpdateCompleted')).toBe(false);
        expect(await w.env.store.updates.outcome(run.runId, 'add-5')).toBeUndefined();

        // The repeat, with the same id, is answered once the survivor has re-run the handler.
        expect(
          await c.update(run.runId, 'crash_add', args, { updateId: 'add-5', timeoutMs: 90_000 }),
        ).toEqual({
          total: 5,
          accepted: 1,
        });
        // And again: the kept answer, nothing run.
        const executionsBefore = (await w.ledger.executions()).length;
        expect(await c.update(run.runId, 'crash_add', args, { updateId: 'add-5' })).toEqual({
          total: 5,
          accepted: 1,
        });
        expect((await w.ledger.executions()).length).toBe(executionsBefore);

        await c.signal(run.runId, 'crash_finish', null);
        expect(await run.result({ timeoutMs: 60_000 })).toBe(5);

        // The handler's step: started twice (killed, then on the survivor), its effect applied once.
        const step = UPDATE_STEP_BASE;
        const executions = (await w.ledger.executions()).filter((e) => e.runId === run.runId);
        expect(executions.map((e) => e.step)).toEqual([step, step]);
        expect(new Set(executions.map((e) => e.key)).size).toBe(1);
        expect(executions[0]).toMatchObject({ pid: owner.pid, finishedAt: null });
        expect(executions[1]!.pid).not.toBe(owner.pid);
        const effects = (await w.ledger.effects()).filter((e) => e.runId === run.runId);
        expect(effects).toMatchObject([{ step, repeats: 0 }]);
        // One acceptance and one completion in the run's history, whatever the crash.
        const history = (await readJournal(w.env.transport, run.runId)).map((p) => p.entry.type);
        expect(history.filter((t) => t === 'UpdateAccepted')).toHaveLength(1);
        expect(history.filter((t) => t === 'UpdateCompleted')).toHaveLength(1);
        expect(await w.env.transport.deadLetters.list()).toEqual([]);
      },
    );
  });
}
