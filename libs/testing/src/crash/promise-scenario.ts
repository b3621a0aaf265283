/**
 * Durable promises on real worker processes, a real bus and a real store (promise-workflow.ts):
 * runs await their promises, some held (a step in flight beside the wait), some suspended (the
 * step done); their only worker is SIGKILLed; every promise is resolved while nobody runs any of
 * them (a resolve retried as it was, too), two of the runs paused first. A new worker then
 * completes every run not paused, each with its own approval; the paused ones stay paused with
 * their completion kept, and complete once resumed. The suite's checks hold: every run's result is
 * its chain's (which a wrong or lost approval would fail), every effect applied once, nothing run
 * again after its completion was journaled, no fencing broken, nothing dead-lettered; and each
 * run's journal drew one token, the one that was resolved.
 *
 * Each adapter pair calls it from its own spec: `describePromiseCrash('nats+redis', environment)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolve } from 'node:path';
import { Client } from '@baton/client';
import { CrashWorld, NO_VIOLATIONS, pollUntil, type CrashEnvironmentFactory } from './harness.js';
import type { ChainInput } from './crash-workflow.js';
import { crashPromised, type Approval } from './promise-workflow.js';
import { REPO_ROOT } from './worker-processes.js';

/** The module the scenario's workers load. */
const PROMISE_WORKFLOW_MODULE = resolve(REPO_ROOT, 'libs/testing/src/crash/promise-workflow.ts');
const LEASE_MS = 2_000;
/**
 * Step 1 of a held run: long enough that it is still in flight when the worker is killed, once
 * every run reached its wait; a suspended run's takes {@link QUICK_MS}, so it suspends at once.
 */
const HELD_STEP_MS = 8_000;
const QUICK_MS = 50;
const RUNS = 6;

export function describePromiseCrash(name: string, factory: CrashEnvironmentFactory): void {
  describe(`durable promises on worker processes: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      'completes every run with its own approval, resolved while its worker was dead (some runs paused), effects once',
      { timeout: 240_000 },
      async () => {
        world = await CrashWorld.create(factory, {
          workerEnv: {
            BATON_WORKFLOWS: PROMISE_WORKFLOW_MODULE,
            BATON_LEASE_MS: String(LEASE_MS),
            BATON_HEARTBEAT_MS: '500',
            BATON_REAP_INTERVAL_MS: '500',
            BATON_IN_PROCESS_WAIT_MS: '0',
          },
        });
        const w = world;
        const client = new Client({ transport: w.env.transport, store: w.env.store });
        const owner = await w.fleet.spawn();

        // Half the runs hold their lease at the kill (step 1 in flight), half are suspended.
        const held = new Set<string>();
        for (let i = 0; i < RUNS; i++) {
          const heldRun = i % 2 === 0;
          const input: ChainInput = {
            seed: i + 1,
            steps: 3,
            minDelayMs: QUICK_MS,
            maxDelayMs: QUICK_MS + 1,
            delaysMs: [QUICK_MS, heldRun ? HELD_STEP_MS : QUICK_MS, QUICK_MS],
          };
          const handle = await client.start(crashPromised, input, {
            idempotencyKey: `${w.ns}-${input.seed}`,
          });
          w.runs.push({ runId: handle.runId, input });
          if (heldRun) held.add(handle.runId);
        }
        const tokens = new Map<string, string>();
        await pollUntil(
          async () => {
            for (const { runId } of w.runs) {
              if (tokens.has(runId)) continue;
              const [pending] = await client.promises.pending(runId);
              if (pending !== undefined) tokens.set(runId, pending.token);
            }
            if (tokens.size < RUNS) return false;
            const inFlight = (await w.ledger.executions()).filter(
              (e) => e.step === 1 && e.finishedAt === null,
            );
            const suspended = await Promise.all(
              w.runs.map(async ({ runId }) => (await w.env.store.runs.get(runId))?.status),
            );
            return (
              [...held].every((runId) => inFlight.some((e) => e.runId === runId)) &&
              w.runs.every(({ runId }, i) => held.has(runId) || suspended[i] === 'suspended')
            );
          },
          60_000,
          () => `every run at its wait (${tokens.size} tokens)\n${w.fleet.describe()}`,
        );

        owner.signal('SIGKILL');
        await owner.exited;
        expect(w.fleet.alive).toEqual([]);

        // One held and one suspended run are paused; every promise is resolved while nobody runs
        // any of them, each with its run's own approval, one of them twice (a caller's retry).
        const runIds = w.runs.map((r) => r.runId);
        const paused = [runIds[0]!, runIds[1]!];
        for (const runId of paused)
          expect(['paused', 'pause-requested']).toContain(await client.runs.pause(runId));
        for (const { runId, input } of w.runs) {
          const approval: Approval = { seed: input.seed };
          expect(await client.promises.resolve(tokens.get(runId)!, approval)).toEqual({ state: 'resolved' });
        }
        expect(
          await client.promises.resolve(tokens.get(runIds[2]!)!, { seed: w.runs[2]!.input.seed }),
        ).toEqual({
          state: 'resolved',
        });
        await expect(client.promises.resolve(tokens.get(runIds[3]!)!, { seed: -1 })).rejects.toThrow(
          /already resolved/,
        );
        for (const runId of runIds) expect((await w.env.store.runs.get(runId))?.status).not.toBe('completed');

        await w.fleet.spawn();
        const others = runIds.filter((runId) => !paused.includes(runId));
        await pollUntil(
          async () =>
            (await Promise.all(others.map((runId) => w.env.store.runs.get(runId)))).every(
              (run) => run?.status === 'completed',
            ),
          90_000,
          () => `the runs not paused to complete\n${w.fleet.describe()}`,
        );
        // The paused runs were not run meanwhile: still paused, their completion kept.
        await sleep(2 * LEASE_MS);
        for (const runId of paused) {
          expect((await w.env.store.runs.get(runId))?.status).toBe('paused');
          expect(await client.promises.get(tokens.get(runId)!)).toMatchObject({ state: 'resolved' });
        }
        for (const runId of paused) expect(await client.runs.resume(runId)).toBe(true);
        await w.waitForAll(90_000);
        expect(await w.violations()).toEqual(NO_VIOLATIONS);

        // One token per run, drawn once and kept through the crash and every replay: the resolved one.
        const journals = await w.journals();
        for (const { runId, input } of w.runs) {
          const entries = journals.get(runId)!.map((p) => p.entry);
          const created = entries.filter((e) => e.type === 'PromiseCreated');
          expect(created.map((e) => (e.type === 'PromiseCreated' ? e.token : ''))).toEqual([
            tokens.get(runId),
          ]);
          expect(entries).toContainEqual(
            expect.objectContaining({
              type: 'PromiseCompleted',
              outcome: 'resolved',
              value: { seed: input.seed },
            }),
          );
        }
      },
    );
  });
}
