/**
 * client.fleet.replayCheck on the memory adapters: runs journaled by a real Worker on v1 code, still in
 * flight (suspended on a signal, or running with a step under way), checked against changed code.
 * - unchanged code, a step added after the wait, a `ctx.patched` change: ok;
 * - steps reordered, an activity renamed, a step inserted before the wait: nondeterministic at
 *   that step, naming what the journal recorded and what the code asked for;
 * - new code that throws during the replay: failed; a workflow or version missing: skipped;
 * - a run the client cannot decrypt: error;
 * - nothing is written (journal, checkpoints and run record unchanged) and no activity runs.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  defineActivity,
  defineRateLimit,
  defineWorkflow,
  type AnyWorkflowDefinition,
  type WorkflowContext,
} from '@baton/core';
import { resolvePayloadProtection } from '@baton/core/runtime';
import { Client, type ReplayCheckRun } from '@baton/client';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';

/** Every activity execution, by name: the outside world's view. */
const executed: string[] = [];
const act = (name: string) =>
  defineActivity({ name, run: (input: string) => (executed.push(name), `${input}>${name}`) });
const [a, b, c, renamed] = [act('a'), act('b'), act('c'), act('b_renamed')];

/** v1 as it runs now: a, b, then it waits for `go`, then c. */
const v1Run = async (ctx: WorkflowContext, input: string): Promise<string> => {
  const x = await ctx.run(a, input);
  const y = await ctx.run(b, x);
  await ctx.waitForSignal('go');
  return ctx.run(c, y);
};
const order = (run: (ctx: WorkflowContext, input: string) => Promise<string>, version = 1) =>
  defineWorkflow({ name: 'order', version, run });
const v1 = order(v1Run);

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

/** A fleet with one v1 worker and a run suspended on `go` after a and b. */
async function suspendedRun(): Promise<{ f: Fleet; runId: string }> {
  const f = fleet({ workflows: [v1] });
  current = f;
  await f.spawn();
  const handle = await f.client.start(v1, 'in');
  await until(async () => (await f.store.runs.get(handle.runId))?.status === 'suspended', 5_000, 'suspended');
  return { f, runId: handle.runId };
}

async function checkOne(client: Client, workflows: AnyWorkflowDefinition[]): Promise<ReplayCheckRun> {
  const report = await client.fleet.replayCheck({ workflows });
  expect(report.runs).toHaveLength(1);
  expect(report.truncated).toBe(false);
  return report.runs[0]!;
}

describe('client.fleet.replayCheck (memory adapters)', () => {
  it('passes unchanged code, a step added after the wait, and a ctx.patched change; writes nothing, runs nothing', async () => {
    const { f, runId } = await suspendedRun();
    const historyBefore = await f.client.history(runId);
    const checkpointsBefore = await f.client.timeTravel.checkpoints(runId);
    const recordBefore = await f.store.runs.get(runId);
    executed.length = 0;

    expect(await checkOne(f.client, [v1])).toEqual({
      runId,
      workflow: 'order',
      version: 1,
      status: 'suspended',
      result: 'ok',
      reached: 'waiting',
      journalSteps: 3,
      nextSeq: 3,
    });

    const addedAfterWait = order(async (ctx, input) => {
      const y = await ctx.run(b, await ctx.run(a, input));
      await ctx.waitForSignal('go');
      return ctx.run(c, await ctx.run(c, y));
    });
    expect(await checkOne(f.client, [addedAfterWait])).toMatchObject({ result: 'ok', reached: 'waiting' });

    // The change guarded: old runs keep their old path (b), new ones take the new (b_renamed).
    const patched = order(async (ctx, input) => {
      const x = await ctx.run(a, input);
      const y = ctx.patched('rename-b') ? await ctx.run(renamed, x) : await ctx.run(b, x);
      await ctx.waitForSignal('go');
      return ctx.run(c, y);
    });
    expect(await checkOne(f.client, [patched])).toMatchObject({ result: 'ok', reached: 'waiting' });

    expect(executed).toEqual([]);
    expect(await f.client.history(runId)).toEqual(historyBefore);
    expect(await f.client.timeTravel.checkpoints(runId)).toEqual(checkpointsBefore);
    expect(await f.store.runs.get(runId)).toEqual(recordBefore);
  });

  it('names the step where reordered, renamed or inserted steps disagree with the journal', async () => {
    const { f, runId } = await suspendedRun();
    executed.length = 0;

    const reordered = order(async (ctx, input) => {
      const y = await ctx.run(b, input);
      const x = await ctx.run(a, y);
      await ctx.waitForSignal('go');
      return ctx.run(c, x);
    });
    const first = await checkOne(f.client, [reordered]);
    expect(first).toMatchObject({
      runId,
      result: 'nondeterministic',
      seq: 0,
      expected: 'activity:a',
      found: 'activity:b',
    });
    expect(first.result === 'nondeterministic' && first.message).toMatch(/BATON|step #0/);

    const renamedStep = order(async (ctx, input) => {
      const y = await ctx.run(renamed, await ctx.run(a, input));
      await ctx.waitForSignal('go');
      return ctx.run(c, y);
    });
    expect(await checkOne(f.client, [renamedStep])).toMatchObject({
      result: 'nondeterministic',
      seq: 1,
      expected: 'activity:b',
      found: 'activity:b_renamed',
    });

    const insertedBeforeWait = order(async (ctx, input) => {
      const y = await ctx.run(b, await ctx.run(a, input));
      await ctx.sleep('1s');
      await ctx.waitForSignal('go');
      return ctx.run(c, y);
    });
    expect(await checkOne(f.client, [insertedBeforeWait])).toMatchObject({
      result: 'nondeterministic',
      seq: 2,
      expected: 'signal:go',
      found: 'sleep',
    });

    // The code stops asking after a: b's journaled completion has no ctx call to go to.
    const dropped = order(async (ctx, input) => {
      const x = await ctx.run(a, input);
      await ctx.waitForSignal('go');
      return x;
    });
    expect(await checkOne(f.client, [dropped])).toMatchObject({
      result: 'nondeterministic',
      seq: 1,
      expected: 'activity:b',
      found: 'signal:go',
    });
    expect(executed).toEqual([]);
  });

  it('reports code that throws during the replay as failed, and a missing workflow or version as skipped', async () => {
    const { f } = await suspendedRun();
    const throws = order(async (ctx, input) => {
      const x = await ctx.run(a, input);
      if (x.includes('>a')) throw new TypeError('new code cannot read the old result');
      return x;
    });
    expect(await checkOne(f.client, [throws])).toMatchObject({
      result: 'failed',
      error: { name: 'TypeError', message: 'new code cannot read the old result' },
    });

    const other = defineWorkflow({ name: 'shipping', version: 1, run: async () => 'x' });
    expect(await checkOne(f.client, [other])).toMatchObject({
      result: 'skipped',
      reason: expect.stringMatching(/workflow order is not in the new code/),
    });
    const v2Only = order(v1Run, 2);
    expect(await checkOne(f.client, [v2Only, order(v1Run, 3)])).toMatchObject({
      result: 'skipped',
      reason: expect.stringMatching(/order@1 is not in the new code \(it has version 2, 3\)/),
    });
  });

  it('stops at the end of the journal of a run with a step under way, without running it', async () => {
    let release: (() => void) | undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const slow = defineActivity({
      name: 'slow',
      run: async (input: string) => {
        executed.push('slow');
        await blocked;
        return input;
      },
    });
    const wf = defineWorkflow({
      name: 'slow_flow',
      version: 1,
      run: async (ctx, input: string) => ctx.run(slow, await ctx.run(a, input)),
    });
    const f = fleet({ workflows: [wf] });
    current = f;
    await f.spawn();
    const handle = await f.client.start(wf, 'in');
    await until(() => executed.includes('slow'), 5_000, 'slow started');
    executed.length = 0;
    try {
      const report = await f.client.fleet.replayCheck({ workflows: [wf], filter: { workflow: 'slow_flow' } });
      expect(report.runs).toEqual([
        {
          runId: handle.runId,
          workflow: 'slow_flow',
          version: 1,
          status: 'running',
          result: 'ok',
          reached: 'end-of-journal',
          journalSteps: 1,
          nextSeq: 1,
        },
      ]);
      expect(executed).toEqual([]);
      // Code that rate-limits the step under way checks the same: the check asks no store for a
      // place (its host has none) and stops at the live step instead of failing on the limit.
      const limit = defineRateLimit({ name: 'rc_limit', limit: 1, per: '1m' });
      const limitedSlow = defineActivity({ name: 'slow', rateLimit: limit, run: (input: string) => input });
      const limitedWf = defineWorkflow({
        name: 'slow_flow',
        version: 1,
        run: async (ctx, input: string) => ctx.run(limitedSlow, await ctx.run(a, input)),
      });
      const limited = await f.client.fleet.replayCheck({
        workflows: [limitedWf],
        filter: { workflow: 'slow_flow' },
      });
      expect(limited.runs).toEqual(report.runs);
    } finally {
      release!();
    }
    expect(await handle.result({ timeoutMs: 5_000 })).toBe('in>a');
  });

  it('reports a run it cannot decrypt as an error, counts every kind, and honours maxRuns', async () => {
    const key = `k1:${randomBytes(32).toString('base64')}`;
    const protection = resolvePayloadProtection({ encryptionKeys: key }, {});
    const f = fleet({ workflows: [v1], payloadProtection: protection });
    current = f;
    await f.spawn();
    const runs = [await f.client.start(v1, 'one'), await f.client.start(v1, 'two')];
    for (const run of runs)
      await until(
        async () => (await f.store.runs.get(run.runId))?.status === 'suspended',
        5_000,
        'suspended',
      );

    const progress: number[] = [];
    const keyless = new Client({ transport: f.transport, store: f.store });
    const report = await keyless.fleet.replayCheck({
      workflows: [v1],
      onProgress: (p) => progress.push(p.counts.checked),
    });
    expect(report.counts).toEqual({
      checked: 2,
      ok: 0,
      nondeterministic: 0,
      failed: 0,
      skipped: 0,
      error: 2,
    });
    expect(report.runs[0]).toMatchObject({
      result: 'error',
      error: { message: expect.stringMatching(/k1/) },
    });
    expect(progress).toEqual([1, 2]);

    const withKeys = new Client({ transport: f.transport, store: f.store, payloadProtection: protection });
    const checked = await withKeys.fleet.replayCheck({ workflows: [v1] });
    expect(checked.counts).toMatchObject({ checked: 2, ok: 2 });
    const one = await withKeys.fleet.replayCheck({ workflows: [v1], maxRuns: 1 });
    expect(one).toMatchObject({ truncated: true, counts: { checked: 1, ok: 1 } });
    const both = await withKeys.fleet.replayCheck({ workflows: [v1], maxRuns: 2, concurrency: 1 });
    expect(both).toMatchObject({ truncated: false, counts: { checked: 2, ok: 2 } });
    expect(both.runs.map((r) => r.runId)).toEqual(checked.runs.map((r) => r.runId));
    await expect(withKeys.fleet.replayCheck({ workflows: [v1], concurrency: 0 })).rejects.toThrow(
      /concurrency is 0; give a whole number from 1 to 64/,
    );

    await expect(withKeys.fleet.replayCheck({ workflows: [v1], maxRuns: 0 })).rejects.toThrow(/maxRuns is 0/);
    await expect(withKeys.fleet.replayCheck({ workflows: [v1, order(v1Run)] })).rejects.toThrow(
      /order@1 is given twice/,
    );
    await expect(
      new Client({ transport: f.transport }).fleet.replayCheck({ workflows: [v1] }),
    ).rejects.toThrow(/replayCheck\(\) reads the store/);
  });
});
