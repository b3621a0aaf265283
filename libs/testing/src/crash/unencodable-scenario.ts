/**
 * The crash scenario for values with no JSON form: real worker processes run the crash suite's
 * chains next to runs whose second step returns a BigInt, and a busy worker is SIGKILLed in the
 * middle. Checked from outside (store, journal, ledger):
 * - every run ends: a chain completes with its right output; a poisoned run fails with
 *   ActivityFailedError around BATON_UNENCODABLE, or completes when its workflow catches it;
 * - each poisoned step executed exactly once per run (the kill included), its journal shows
 *   ActivityFailed with the code and never ActivityCompleted;
 * - the chains' invariants (effects once, no re-execution after completion, fencing) hold.
 */
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { CrashWorld, type CrashEnvironmentFactory } from './harness.js';
import { readJournal } from './invariants.js';
import { POISONED_STEPS, poisonedRun, type PoisonedInput } from './poisoned-workflow.js';
import { REPO_ROOT } from './worker-processes.js';

const POISONED_MODULE = resolve(REPO_ROOT, 'libs/testing/src/crash/poisoned-workflow.ts');
const POISONED_RUNS = 16;
const CHAIN_RUNS = 16;

export function describeUnencodableCrash(name: string, factory: CrashEnvironmentFactory): void {
  describe(`crash scenario, values with no JSON form: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      'ends every run and executes each poisoned step once while a busy worker is SIGKILLed',
      { timeout: 120_000 },
      async () => {
        world = await CrashWorld.create(factory, {
          workerEnv: { BATON_WORKFLOWS: POISONED_MODULE, BATON_CONCURRENCY: '40' },
        });
        const w = world;
        const client = new Client({ transport: w.env.transport, store: w.env.store });
        const [first] = await Promise.all([w.fleet.spawn(), w.fleet.spawn()]);
        if (!first) throw new Error('fleet did not start');

        const poisoned: Array<{ runId: string; input: PoisonedInput }> = [];
        for (let seed = 1; seed <= POISONED_RUNS; seed++) {
          const input: PoisonedInput = { seed, catches: seed % 2 === 0, delayMs: 150 + (seed % 5) * 50 };
          const handle = await client.start(poisonedRun, input, { idempotencyKey: `${w.ns}-p${seed}` });
          poisoned.push({ runId: handle.runId, input });
        }
        await w.enqueue(CHAIN_RUNS, { steps: 6, minDelayMs: 100, maxDelayMs: 300 });

        // Kill a worker while it has a poisoned run's activity in flight, mid-run.
        const poisonedIds = new Set(poisoned.map((p) => p.runId));
        let victim = undefined as (typeof w.fleet.alive)[number] | undefined;
        const deadline = Date.now() + 30_000;
        while (victim === undefined) {
          if (Date.now() > deadline) throw new Error(`no worker was busy within 30 s\n${w.fleet.describe()}`);
          const busy = (await w.ledger.executions()).filter(
            (e) => e.finishedAt === null && poisonedIds.has(e.runId),
          );
          victim = w.fleet.alive.find((p) => busy.some((e) => e.pid === p.pid));
          if (victim === undefined) await sleep(50);
        }
        victim.signal('SIGKILL');
        await w.fleet.spawn();

        await w.waitForAll(90_000);
        const poisonedOpen = async (): Promise<string[]> => {
          const open: string[] = [];
          for (const { runId } of poisoned) {
            const status = (await w.env.store.runs.get(runId))?.status;
            if (status !== 'completed' && status !== 'failed') open.push(runId);
          }
          return open;
        };
        for (let open = await poisonedOpen(); open.length > 0; open = await poisonedOpen()) {
          if (Date.now() > deadline + 60_000)
            throw new Error(`poisoned runs did not finish: ${open.join(', ')}\n${w.fleet.describe()}`);
          await sleep(250);
        }

        // The chains: every invariant of the crash suite.
        expect(await w.violations()).toEqual({
          outcomes: [],
          effects: [],
          reexecutedAfterCompletion: [],
          fencing: [],
          deadLetters: [],
        });

        const executions = await w.ledger.executions();
        const problems: string[] = [];
        for (const { runId, input } of poisoned) {
          const record = await w.env.store.runs.get(runId);
          if (input.catches) {
            if (record?.status !== 'completed' || record.result !== 'caught BATON_UNENCODABLE')
              problems.push(`${runId}: ${record?.status} ${JSON.stringify(record?.result ?? record?.error)}`);
          } else if (
            record?.status !== 'failed' ||
            record.error?.name !== 'ActivityFailedError' ||
            record.error.cause?.code !== 'BATON_UNENCODABLE'
          ) {
            problems.push(`${runId}: ${record?.status} ${JSON.stringify(record?.error ?? record?.result)}`);
          }
          const key = `${runId}:${POISONED_STEPS.poison}`;
          const runs = executions.filter((e) => e.key === key).length;
          if (runs !== 1) problems.push(`${runId}: poisoned step executed ${runs} times`);
          const entries = (await readJournal(w.env.transport, runId)).map((p) => p.entry);
          const ofStep = entries.filter((e) => 'seq' in e && e.seq === POISONED_STEPS.poison);
          if (ofStep.some((e) => e.type === 'ActivityCompleted'))
            problems.push(`${runId}: the poisoned step was journaled as completed`);
          const failed = ofStep.filter((e) => e.type === 'ActivityFailed');
          if (
            failed.length !== 1 ||
            (failed[0] as { error: { code?: string } }).error.code !== 'BATON_UNENCODABLE'
          )
            problems.push(`${runId}: ${failed.length} ActivityFailed entries for the poisoned step`);
        }
        expect(problems).toEqual([]);
        expect(poisonedIds.size).toBe(POISONED_RUNS);
        // At the default level, the workers said what happened, naming the run and the problem.
        const warned = new Set(
          w.fleet.all.flatMap((p) =>
            p.logs
              .filter(
                (l) =>
                  l.msg.startsWith('activity result cannot be encoded') &&
                  l.problem === 'a BigInt at $.amount',
              )
              .map((l) => String(l.runId)),
          ),
        );
        expect([...warned].every((runId) => poisonedIds.has(runId))).toBe(true);
        expect(warned.size).toBeGreaterThan(0);
        const killedRuns = new Set(
          executions.filter((e) => e.pid === victim.pid && poisonedIds.has(e.runId)).map((e) => e.runId),
        );
        console.log(
          `[crash scenario] ${name}: ${POISONED_RUNS} poisoned and ${CHAIN_RUNS} chain runs, 1 SIGKILL ` +
            `(pid ${victim.pid} had run steps of ${killedRuns.size} poisoned runs), ${warned.size} poisoned runs logged`,
        );
      },
    );
  });
}
