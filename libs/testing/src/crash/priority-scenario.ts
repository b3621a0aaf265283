/**
 * The crash scenario for run priorities: real worker processes take a backlog of low-priority
 * chains with high-priority chains enqueued behind it, and a worker busy with a high run is
 * SIGKILLed mid-run. A priority only orders claims (the reaper's resume of a killed worker's run
 * goes in the default lane, docs/priorities.md), so every invariant of the crash suite must hold for
 * both levels: every run completes with its right output, each effect once, nothing re-executed
 * after completion, no zombie write, no dead letter.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { CrashWorld, type CrashEnvironmentFactory } from './harness.js';

const LOW_RUNS = 20;
const HIGH_RUNS = 12;
const SHAPE = { steps: 6, minDelayMs: 100, maxDelayMs: 250 };

export function describePriorityCrash(name: string, factory: CrashEnvironmentFactory): void {
  describe(`crash scenario, run priorities: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      'completes every low and high run, each effect once, when a worker busy with a high run is SIGKILLed',
      { timeout: 150_000 },
      async () => {
        world = await CrashWorld.create(factory, { workerEnv: { BATON_CONCURRENCY: '4' } });
        const w = world;
        await w.enqueue(LOW_RUNS, SHAPE, 'low');
        const highs = new Set((await w.enqueue(HIGH_RUNS, SHAPE, 'high')).map((r) => r.runId));
        await Promise.all([w.fleet.spawn(), w.fleet.spawn()]);

        // Kill a worker while it has a high run's activity in flight.
        const deadline = Date.now() + 30_000;
        let victim = undefined as (typeof w.fleet.alive)[number] | undefined;
        while (victim === undefined) {
          if (Date.now() > deadline)
            throw new Error(`no worker ran a high run within 30 s\n${w.fleet.describe()}`);
          const busy = (await w.ledger.executions()).filter(
            (e) => e.finishedAt === null && highs.has(e.runId),
          );
          victim = w.fleet.alive.find((p) => busy.some((e) => e.pid === p.pid));
          if (victim === undefined) await sleep(50);
        }
        victim.signal('SIGKILL');
        await w.fleet.spawn();

        await w.waitForAll(120_000);
        expect(await w.violations()).toEqual({
          outcomes: [],
          effects: [],
          reexecutedAfterCompletion: [],
          fencing: [],
          deadLetters: [],
        });
      },
    );
  });
}
