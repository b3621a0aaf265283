/**
 * client.fleet.replayCheck on the real adapters (NATS + Redis, NATS + Postgres): runs journaled and
 * checkpointed by a real Worker on v1 code, suspended on a signal, checked against new code:
 * - the same code and a `ctx.patched` change pass (the whole journal replays, the run waits);
 * - a renamed activity is reported at its step, with what the journal recorded and what the code
 *   asked for; a workflow the new code lacks is skipped;
 * - nothing is written: each run's journal and checkpoints are as they were, no activity ran, and a
 *   v1 worker then finishes the runs as if no check had happened.
 */
import { describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow, type WorkflowContext } from '@baton/core';
import { Worker } from '@baton/worker';
import { inProcessNamespace, IN_PROCESS_PAIRS } from './in-process.spec-helper.js';

const executed: string[] = [];
const act = (name: string) =>
  defineActivity({ name, run: async (text: string) => (executed.push(name), `${text}>${name}`) });
const [a, b, c, bRenamed] = [act('a'), act('b'), act('c'), act('b_renamed')];

const v1 = defineWorkflow({
  name: 'rc_order',
  version: 1,
  run: async (ctx, input: string) => {
    const y = await ctx.run(b, await ctx.run(a, input));
    await ctx.waitForSignal('go');
    return ctx.run(c, y);
  },
});
const newCode = (run: (ctx: WorkflowContext, input: string) => Promise<string>) =>
  defineWorkflow({ name: 'rc_order', version: 1, run });

const renamed = newCode(async (ctx, input) => {
  const y = await ctx.run(bRenamed, await ctx.run(a, input));
  await ctx.waitForSignal('go');
  return ctx.run(c, y);
});
const patched = newCode(async (ctx, input) => {
  const x = await ctx.run(a, input);
  const y = ctx.patched('rename-b') ? await ctx.run(bRenamed, x) : await ctx.run(b, x);
  await ctx.waitForSignal('go');
  return ctx.run(c, y);
});
const unrelated = defineWorkflow({ name: 'rc_other', version: 1, run: async () => 'x' });

describe.each(IN_PROCESS_PAIRS.slice(0, 2))('client.fleet.replayCheck on $name', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'rc');

  async function startWorker(): Promise<Worker> {
    const worker = new Worker({
      transport: ns.transport,
      store: ns.store,
      workflows: [v1],
      leaseMs: 3_000,
      fetchWaitMs: 200,
      inProcessWaitMs: 0,
      drainTimeoutMs: 2_000,
      checkpointEvery: 1,
    });
    await worker.start();
    ns.workers.push(worker);
    return worker;
  }

  it('passes unchanged and patched code, names a renamed step, skips a missing workflow, and writes nothing', async () => {
    const { client } = ns;
    const worker = await startWorker();
    const runs = [await client.start(v1, 'one'), await client.start(v1, 'two')];
    for (const run of runs) {
      const deadline = Date.now() + 20_000;
      // The store knows the run only once the worker has taken its start message.
      while ((await ns.store.runs.get(run.runId))?.status !== 'suspended') {
        if (Date.now() > deadline) throw new Error(`run ${run.runId} did not suspend`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await worker.stop();
    const before = await Promise.all(
      runs.map(async (r) => ({
        history: await client.history(r.runId),
        checkpoints: await client.timeTravel.checkpoints(r.runId),
      })),
    );
    expect(before[0]!.checkpoints.length).toBeGreaterThan(0);
    executed.length = 0;
    const ids = new Set(runs.map((r) => r.runId));
    const mine = <T extends { runId: string }>(list: T[]): T[] => list.filter((r) => ids.has(r.runId));

    const same = await client.fleet.replayCheck({ workflows: [v1] });
    expect(mine(same.runs)).toHaveLength(2);
    for (const run of mine(same.runs))
      expect(run).toMatchObject({ result: 'ok', reached: 'waiting', journalSteps: 3, status: 'suspended' });

    const withPatch = await client.fleet.replayCheck({ workflows: [patched] });
    for (const run of mine(withPatch.runs)) expect(run).toMatchObject({ result: 'ok', reached: 'waiting' });

    const progress: string[] = [];
    const broken = await client.fleet.replayCheck({
      workflows: [renamed],
      filter: { workflow: 'rc_order', status: 'suspended' },
      onProgress: ({ run }) => progress.push(run.runId),
    });
    expect(mine(broken.runs)).toHaveLength(2);
    for (const run of mine(broken.runs)) {
      expect(run).toMatchObject({
        result: 'nondeterministic',
        seq: 1,
        expected: 'activity:b',
        found: 'activity:b_renamed',
      });
    }
    expect(progress).toEqual(broken.runs.map((r) => r.runId));

    const missing = await client.fleet.replayCheck({ workflows: [unrelated] });
    for (const run of mine(missing.runs))
      expect(run).toMatchObject({
        result: 'skipped',
        reason: expect.stringMatching(/rc_order is not in the new code/),
      });

    expect(executed).toEqual([]);
    const after = await Promise.all(
      runs.map(async (r) => ({
        history: await client.history(r.runId),
        checkpoints: await client.timeTravel.checkpoints(r.runId),
      })),
    );
    expect(after).toEqual(before);

    // The runs go on as if no check had happened.
    await startWorker();
    for (const run of runs) await client.signal(run.runId, 'go', null);
    await expect(runs[0]!.result({ timeoutMs: 20_000 })).resolves.toBe('one>a>b>c');
    await expect(runs[1]!.result({ timeoutMs: 20_000 })).resolves.toBe('two>a>b>c');
  }, 60_000);
});
