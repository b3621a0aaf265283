/**
 * Continue-as-new on memory adapters (the real adapters: tests/system/src/continue-as-new.int.spec.ts):
 * a run that returns `ctx.continueAsNew(input)` ends and its successor starts with a fresh history;
 * `result()` of the first run follows the chain to the last; a worker that dies after journaling
 * the end and sending the successor's start, before recording the end, leaves one successor, not
 * two, and every activity ran once per run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import { decodeEntries, continuationKey, CONTINUED_AS, isContinuedAsNew } from '@baton/core/runtime';
import { fleet, Ledger, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

function counter(ledger: Ledger) {
  const step = defineActivity({
    name: 'can_step',
    run: async (n: number, io) => (ledger.record(io.idempotencyKey), n + 1),
  });
  return defineWorkflow({
    name: 'can_counter',
    version: 1,
    run: async (ctx, input: { n: number; until: number }) => {
      const next = await ctx.run(step, input.n);
      if (next < input.until) return ctx.continueAsNew({ n: next, until: input.until });
      return `done at ${next}`;
    },
  });
}

/** The chain from `runId` on, as the store records it. */
async function chain(f: Fleet, runId: string): Promise<string[]> {
  const ids = [runId];
  for (;;) {
    const run = await f.store.runs.get(ids.at(-1)!);
    if (!run || !isContinuedAsNew(run.result)) return ids;
    ids.push(run.result[CONTINUED_AS].runId);
  }
}

describe('continue-as-new', () => {
  it('ends the run, starts its successor with a fresh history, and result() follows the chain', async () => {
    const ledger = new Ledger();
    const workflow = counter(ledger);
    const f = (current = fleet({ workflows: [workflow] }));
    await f.spawn();
    const run = await f.client.start(workflow, { n: 0, until: 4 });
    expect(await run.result({ timeoutMs: 10_000 })).toBe('done at 4');

    const ids = await chain(f, run.runId);
    expect(ids).toHaveLength(4);
    for (const [i, id] of ids.entries()) {
      const record = await f.store.runs.get(id);
      expect(record?.status).toBe('completed');
      // Each successor names its parent through its idempotency key.
      if (i > 0) expect(record?.idempotencyKey).toBe(continuationKey(ids[i - 1]!));
      // A fresh history: one step each, whatever the chain's length.
      const entries = (await f.journal.journal.read(id, 0)).flatMap((r) => decodeEntries(r.data, id));
      expect(entries.filter((e) => e.type === 'ActivityCompleted')).toHaveLength(1);
      expect(ledger.count(`${id}:0`)).toBe(1);
    }
    // The parent's recorded result names the successor and the input it was given.
    const first = await f.store.runs.get(run.runId);
    expect(first?.result).toEqual({
      [CONTINUED_AS]: { runId: ids[1], workflow: 'can_counter', version: 1, input: { n: 1, until: 4 } },
    });
    // Any run of the chain resolves to the last one's result.
    expect(await f.client.result(ids[2]!, { timeoutMs: 5_000 })).toBe('done at 4');
  });

  it('a worker that dies after sending the successor, before recording the end, leaves one successor', async () => {
    const ledger = new Ledger();
    const workflow = counter(ledger);
    const f = (current = fleet({ workflows: [workflow] }));
    let frozen: string | undefined;
    // Freezes forever at the fault point (as SIGKILL would stop it) and is cut off.
    const doomed = await f.spawn({
      faults: async (point, info) => {
        if (point !== 'before-finish' || frozen !== undefined) return;
        frozen = info.runId;
        doomed.crash();
        await new Promise(() => undefined);
      },
    });
    const run = await f.client.start(workflow, { n: 0, until: 2 });
    await until(() => frozen !== undefined, 5_000, 'the doomed worker to reach the end of the first run');
    expect(frozen).toBe(run.runId);
    await f.spawn();
    expect(await run.result({ timeoutMs: 15_000 })).toBe('done at 2');

    const ids = await chain(f, run.runId);
    expect(ids).toHaveLength(2);
    // The second worker replayed the end and sent the same start again: one successor in the store.
    const page = await f.store.runs.list({ idempotencyKeyPrefix: 'continue-as-new:', limit: 100 });
    expect(page.runs.map((r) => r.runId)).toEqual([ids[1]]);
    // The first run's step ran once. The doomed worker may have begun the successor's step before
    // it froze (its start was already sent): that step then ran again, as any step whose result
    // was never journaled does; the successor's journal holds one result.
    expect(ledger.count(`${ids[0]}:0`)).toBe(1);
    const entries = (await f.journal.journal.read(ids[1]!, 0)).flatMap((r) => decodeEntries(r.data, ids[1]!));
    expect(entries.filter((e) => e.type === 'ActivityCompleted')).toHaveLength(1);
  });

  it('continues on another version when asked, and refuses a version that is not a positive integer', async () => {
    const ledger = new Ledger();
    const v2 = defineWorkflow({ name: 'can_versions', version: 2, run: async () => 'on v2' });
    const v1 = defineWorkflow({
      name: 'can_versions',
      version: 1,
      run: async (ctx, input: { to: number }) => ctx.continueAsNew(null, { version: input.to }),
    });
    const f = (current = fleet({ workflows: [v1, v2, counter(ledger)] }));
    await f.spawn();
    expect(await f.client.start(v1, { to: 2 }).then((r) => r.result({ timeoutMs: 10_000 }))).toBe('on v2');
    const bad = await f.client.start(v1, { to: 0 });
    await expect(bad.result({ timeoutMs: 10_000 })).rejects.toThrow(/version 0 is not a positive integer/);
  });
});
