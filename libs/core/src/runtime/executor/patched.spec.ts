/**
 * ctx.patched(): a workflow changed in place. Old runs replay their old branch, new runs take the
 * new one, and a patch check shifts no step number (so old histories replay without a
 * NonDeterminismError).
 */
import { describe, expect, it } from 'vitest';
import { decodeEntries, encodeEntries, encodeJson } from '../codec.js';
import type { JournalEntry } from '../../shared/journal.js';
import { defineActivity, defineWorkflow, type WorkflowContext } from '../../author/workflow.js';
import { execute } from './test-host.spec-helper.js';

const calls: string[] = [];
const step = defineActivity({ name: 'step', run: (label: string) => (calls.push(label), label) });

const kinds = (journal: JournalEntry[]): string[] =>
  journal.map((e) =>
    e.type === 'PatchMarker'
      ? `PatchMarker:${e.changeId}@${e.atSeq}`
      : 'seq' in e
        ? `${e.type}#${e.seq}`
        : e.type,
  );

/** The code before the change: a, b, c. */
const v1 = defineWorkflow({
  name: 'order',
  version: 1,
  run: async (ctx) => [await ctx.run(step, 'a'), await ctx.run(step, 'b'), await ctx.run(step, 'c')],
});

/** The same workflow version after the change: the middle step became two steps. */
const patchedRun = async (ctx: WorkflowContext): Promise<string[]> => {
  const out = [await ctx.run(step, 'a')];
  if (ctx.patched('split-b')) out.push(await ctx.run(step, 'b1'), await ctx.run(step, 'b2'));
  else out.push(await ctx.run(step, 'b'));
  out.push(await ctx.run(step, 'c'));
  return out;
};
const v1Patched = defineWorkflow({ name: 'order', version: 1, run: patchedRun });

describe('ctx.patched', () => {
  it('takes the new branch on a new run and journals a marker that takes no step number', async () => {
    calls.length = 0;
    const { outcome, journal } = await execute(v1Patched, null);
    expect(outcome).toEqual({ kind: 'completed', result: ['a', 'b1', 'b2', 'c'] });
    expect(kinds(journal)).toEqual([
      'ActivityCompleted#0',
      'PatchMarker:split-b@1',
      'ActivityCompleted#1',
      'ActivityCompleted#2',
      'ActivityCompleted#3',
    ]);
  });

  it('replays a history recorded by the old code through the old branch, without NonDeterminismError', async () => {
    const old = await execute(v1, null);
    calls.length = 0;
    // Complete replay: every step recorded.
    const replay = await execute(v1Patched, null, old.journal);
    expect(replay.outcome).toEqual({ kind: 'completed', result: ['a', 'b', 'c'] });
    expect(calls).toEqual([]);
    expect(replay.host.journal).toEqual([]);

    // A run that crashed after `b`: it resumes on the old branch and runs only `c` live.
    const crashed = old.journal.slice(0, 2);
    const resumed = await execute(v1Patched, null, crashed);
    expect(resumed.outcome).toEqual({ kind: 'completed', result: ['a', 'b', 'c'] });
    expect(calls).toEqual(['c']);
    expect(kinds(resumed.host.journal)).toEqual(['ActivityCompleted#2']);
  });

  it('lets an old run that had not reached the patch yet take the new branch', async () => {
    const old = await execute(v1, null);
    calls.length = 0;
    const resumed = await execute(v1Patched, null, old.journal.slice(0, 1)); // crashed after `a`
    expect(resumed.outcome).toEqual({ kind: 'completed', result: ['a', 'b1', 'b2', 'c'] });
    expect(calls).toEqual(['b1', 'b2', 'c']);
    expect(kinds(resumed.host.journal)[0]).toBe('PatchMarker:split-b@1');
  });

  it('replays a run that recorded the marker on the new branch, also after a crash', async () => {
    const first = await execute(v1Patched, null);
    calls.length = 0;
    const replay = await execute(v1Patched, null, first.journal);
    expect(replay.outcome).toEqual({ kind: 'completed', result: ['a', 'b1', 'b2', 'c'] });
    expect(calls).toEqual([]);

    // Crashed right after the marker: the marker alone decides, nothing recorded follows it.
    const upToMarker = first.journal.slice(0, 2);
    const resumed = await execute(v1Patched, null, upToMarker);
    expect(resumed.outcome).toEqual({ kind: 'completed', result: ['a', 'b1', 'b2', 'c'] });
    expect(calls).toEqual(['b1', 'b2', 'c']);
    expect(resumed.host.journal.filter((e) => e.type === 'PatchMarker')).toEqual([]);
  });

  it('mixes two patches: each follows its own history, whichever code recorded it', async () => {
    const twoPatches = defineWorkflow({
      name: 'order',
      version: 1,
      run: async (ctx) => {
        const out = [await ctx.run(step, 'a')];
        if (ctx.patched('split-b')) out.push(await ctx.run(step, 'b1'), await ctx.run(step, 'b2'));
        else out.push(await ctx.run(step, 'b'));
        out.push(await ctx.run(step, ctx.patched('rename-c') ? 'c2' : 'c'));
        return out;
      },
    });
    // Recorded by the code with the first patch only, crashed after b2.
    const withFirst = await execute(v1Patched, null);
    const crashedAfterB2 = withFirst.journal.slice(0, 4);
    calls.length = 0;
    const resumed = await execute(twoPatches, null, crashedAfterB2);
    expect(resumed.outcome).toEqual({ kind: 'completed', result: ['a', 'b1', 'b2', 'c2'] });
    expect(calls).toEqual(['c2']);
    expect(kinds(resumed.host.journal)).toEqual(['PatchMarker:rename-c@3', 'ActivityCompleted#3']);

    // Recorded by the code with the first patch, completely: both answers come from history.
    calls.length = 0;
    const full = await execute(twoPatches, null, withFirst.journal);
    expect(full.outcome).toEqual({ kind: 'completed', result: ['a', 'b1', 'b2', 'c'] });
    expect(calls).toEqual([]);

    // Recorded by the oldest code: both patches answer false.
    const oldest = await execute(v1, null);
    const replay = await execute(twoPatches, null, oldest.journal);
    expect(replay.outcome).toEqual({ kind: 'completed', result: ['a', 'b', 'c'] });

    // A new run takes both new branches and replays them.
    const fresh = await execute(twoPatches, null);
    expect(fresh.outcome).toEqual({ kind: 'completed', result: ['a', 'b1', 'b2', 'c2'] });
    const again = await execute(twoPatches, null, fresh.journal);
    expect(again.outcome).toEqual(fresh.outcome);
    expect(again.host.journal).toEqual([]);
  });

  it('gives one answer per change id for the whole execution', async () => {
    const loop = defineWorkflow({
      name: 'loop',
      version: 1,
      run: async (ctx) => {
        const seen: boolean[] = [];
        for (const label of ['x', 'y']) {
          seen.push(ctx.patched('p'));
          await ctx.run(step, label);
        }
        return seen;
      },
    });
    const old = defineWorkflow({
      name: 'loop',
      version: 1,
      run: async (ctx) => [await ctx.run(step, 'x'), await ctx.run(step, 'y')],
    });
    // Crashed after x under the old code: the first check is inside the recording (false), and
    // the second, though live, keeps that answer.
    const recorded = (await execute(old, null)).journal.slice(0, 1);
    const resumed = await execute(loop, null, recorded);
    expect(resumed.outcome).toEqual({ kind: 'completed', result: [false, false] });
    expect(resumed.host.journal.some((e) => e.type === 'PatchMarker')).toBe(false);
    const fresh = await execute(loop, null);
    expect(fresh.outcome).toEqual({ kind: 'completed', result: [true, true] });
    expect(fresh.journal.filter((e) => e.type === 'PatchMarker')).toHaveLength(1);
  });

  it('deprecatePatch journals the marker for live runs, so code still asking patched() replays them', async () => {
    const deprecated = defineWorkflow({
      name: 'order',
      version: 1,
      run: async (ctx) => {
        const out = [await ctx.run(step, 'a')];
        ctx.deprecatePatch('split-b');
        out.push(await ctx.run(step, 'b1'), await ctx.run(step, 'b2'), await ctx.run(step, 'c'));
        return out;
      },
    });
    const first = await execute(deprecated, null);
    expect(kinds(first.journal)[1]).toBe('PatchMarker:split-b@1');
    expect(first.journal.find((e) => e.type === 'PatchMarker')).toMatchObject({ deprecated: true });
    const onOlderBuild = await execute(v1Patched, null, first.journal);
    expect(onOlderBuild.outcome).toEqual({ kind: 'completed', result: ['a', 'b1', 'b2', 'c'] });
    const replay = await execute(deprecated, null, first.journal);
    expect(replay.host.journal).toEqual([]);
  });

  it('refuses a malformed change id with an error naming it', async () => {
    const bad = defineWorkflow({ name: 'bad', version: 1, run: async (ctx) => ctx.patched('has space') });
    const { outcome } = await execute(bad, null);
    expect(outcome).toMatchObject({ kind: 'failed', error: { code: 'BATON_PATCH_ID' } });
    if (outcome.kind === 'failed') expect(outcome.error.message).toContain("'has space'");
  });

  it('survives the codec, which refuses a marker without a change id', () => {
    const marker: JournalEntry = { type: 'PatchMarker', changeId: 'split-b', atSeq: 1, epoch: 1, at: 5 };
    expect(decodeEntries(encodeEntries([marker]), 'r')).toEqual([marker]);
    const broken = encodeJson({ v: 1, entries: [{ type: 'PatchMarker', atSeq: 1, epoch: 1, at: 5 }] });
    expect(() => decodeEntries(broken, 'run-9')).toThrow(/run-9 holds a PatchMarker without/);
  });
});
