/**
 * Child workflows on memory adapters (the real adapters: tests/system/src/crash-child-workflows.fleet.int.spec.ts):
 * a parent starts children and waits for their results durably; a child's failure reaches the
 * parent as ChildWorkflowError; a parent frozen right after starting a child, resumed by another
 * worker, never starts a second one; a child frozen after journaling its end reports it once;
 * cancelling the parent cancels its children unless they were abandoned; a child that continues as
 * new is followed to its chain's last run, for its result and for the parent-close policy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ChildWorkflowError, defineActivity, defineSignal, defineWorkflow } from '@baton/core';
import { decodeEntries, type JournalEntry, childKey, childKeyPrefix, parentOfKey } from '@baton/core/runtime';
import { fleet, Ledger, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const release = defineSignal<null>('release');

function workflows(ledger: Ledger) {
  const work = defineActivity({
    name: 'cw_work',
    run: async (n: number, io) => (ledger.record(io.idempotencyKey), n * 10),
  });
  const child = defineWorkflow({
    name: 'cw_child',
    version: 1,
    run: async (ctx, input: { n: number; fail?: boolean; wait?: boolean }) => {
      const value = await ctx.run(work, input.n);
      if (input.wait) await ctx.waitForSignal(release);
      if (input.fail) throw new Error(`child ${input.n} refused`);
      return value;
    },
  });
  const parent = defineWorkflow({
    name: 'cw_parent',
    version: 1,
    run: async (ctx, input: { children: number; failing?: number }) => {
      const handles = [];
      for (let n = 1; n <= input.children; n++) {
        handles.push(await ctx.startChild(child, { n, fail: n === input.failing }));
      }
      const results: Array<number | string> = [];
      for (const handle of handles) {
        try {
          results.push(await handle.result());
        } catch (err) {
          if (!(err instanceof ChildWorkflowError)) throw err;
          results.push(`${err.status}: ${err.failure.message}`);
        }
      }
      return results;
    },
  });
  const waiting = defineWorkflow({
    name: 'cw_waiting',
    version: 1,
    run: async (ctx, input: { policy: 'cancel' | 'abandon' }) => {
      const handle = await ctx.startChild(child, { n: 7, wait: true }, { parentClosePolicy: input.policy });
      return handle.result();
    },
  });
  const direct = defineWorkflow({
    name: 'cw_direct',
    version: 1,
    run: async (ctx, input: { n: number }) => ctx.executeChild(child, { n: input.n, fail: input.n < 0 }),
  });
  const looping = defineWorkflow({
    name: 'cw_looping',
    version: 1,
    run: async (ctx, input: { left: number; total: number; wait?: boolean }) => {
      const total = input.total + (await ctx.run(work, input.left));
      if (input.left > 0) return ctx.continueAsNew({ ...input, left: input.left - 1, total });
      if (input.wait) await ctx.waitForSignal(release);
      return total;
    },
  });
  const loopParent = defineWorkflow({
    name: 'cw_loop_parent',
    version: 1,
    run: async (ctx, input: { wait: boolean }) =>
      ctx.executeChild(looping, { left: 2, total: 0, wait: input.wait }),
  });
  return { child, parent, waiting, direct, looping, loopParent };
}

async function childrenOf(f: Fleet, parentRunId: string) {
  const page = await f.store.runs.list({ idempotencyKeyPrefix: childKeyPrefix(parentRunId), limit: 100 });
  return page.runs;
}

async function onlyChild(f: Fleet, parentRunId: string) {
  await until(async () => (await childrenOf(f, parentRunId)).length === 1, 5_000, 'the child to start');
  const child = (await childrenOf(f, parentRunId))[0]!;
  await until(
    async () => (await f.store.runs.get(child.runId))?.status === 'suspended',
    5_000,
    'the child to wait',
  );
  return child;
}

async function entriesOf(f: Fleet, runId: string): Promise<JournalEntry[]> {
  return (await f.journal.journal.read(runId, 0)).flatMap((r) => decodeEntries(r.data, runId));
}

const startedChild = (e: JournalEntry) => e.type === 'ActivityCompleted' && e.name === 'baton.child:cw_child';

describe('child workflows', () => {
  it('starts children, waits for their results, and gets a failed child as ChildWorkflowError', async () => {
    const ledger = new Ledger();
    const { parent } = workflows(ledger);
    const f = (current = fleet({ workflows: Object.values(workflows(ledger)) }));
    await f.spawn();
    await f.spawn();
    const run = await f.client.start(parent, { children: 3, failing: 2 });
    expect(await run.result({ timeoutMs: 15_000 })).toEqual([10, 'failed: child 2 refused', 30]);

    const children = await childrenOf(f, run.runId);
    expect(children).toHaveLength(3);
    for (const child of children) {
      // The link: the child's key names its parent and the step that started it.
      expect(parentOfKey(child.idempotencyKey)?.runId).toBe(run.runId);
      expect(ledger.count(`${child.runId}:0`)).toBe(1);
    }
    expect(children.map((c) => c.status).sort()).toEqual(['completed', 'completed', 'failed']);
    // The parent's history names each child in the step that started it.
    const starts = (await entriesOf(f, run.runId)).filter(startedChild);
    expect(starts.map((e) => (e as { result: { runId: string } }).result.runId).sort()).toEqual(
      children.map((c) => c.runId).sort(),
    );
  });

  it('executeChild returns the result, or throws ChildWorkflowError the parent may leave uncaught', async () => {
    const ledger = new Ledger();
    const { direct } = workflows(ledger);
    const f = (current = fleet({ workflows: Object.values(workflows(ledger)) }));
    await f.spawn();
    expect(await f.client.start(direct, { n: 4 }).then((r) => r.result({ timeoutMs: 10_000 }))).toBe(40);
    const failing = await f.client.start(direct, { n: -1 });
    await expect(failing.result({ timeoutMs: 10_000 })).rejects.toThrow(
      /child run \S+ \(cw_child\) failed: Error: child -1 refused/,
    );
  });

  it('a parent frozen after sending the start of a child, before journaling it, starts no second child when resumed', async () => {
    const ledger = new Ledger();
    const { direct } = workflows(ledger);
    const f = (current = fleet({ workflows: Object.values(workflows(ledger)) }));
    let frozen = false;
    // Freezes the parent after the child's start was sent and before the step's result is
    // journaled, as SIGKILL would: the new owner runs the step again.
    const doomed = await f.spawn({
      faults: async (point, info) => {
        if (frozen || point !== 'before-journal-append' || !info.entryTypes?.includes('ActivityCompleted'))
          return;
        if (parentOfKey((await f.store.runs.get(info.runId))?.idempotencyKey) !== undefined) return;
        frozen = true;
        doomed.crash();
        await new Promise(() => undefined);
      },
    });
    const run = await f.client.start(direct, { n: 5 });
    await until(() => frozen, 5_000, 'the doomed worker to send the start of the child');
    await f.spawn();
    expect(await run.result({ timeoutMs: 15_000 })).toBe(50);
    const children = await childrenOf(f, run.runId);
    expect(children.map((c) => c.idempotencyKey)).toEqual([childKey(run.runId, 0)]);
    // The step ran twice (its first result was never journaled) and started one child. (The
    // doomed worker may have begun that child before it froze: its step then ran again, as any
    // step whose result was never journaled does; its journal holds one result.)
    expect((await entriesOf(f, run.runId)).filter(startedChild)).toHaveLength(1);
    const childEntries = await entriesOf(f, children[0]!.runId);
    expect(childEntries.filter((e) => e.type === 'ActivityCompleted')).toHaveLength(1);
  });

  it('a child that dies after journaling its end reports it once, and the parent completes', async () => {
    const ledger = new Ledger();
    const { direct } = workflows(ledger);
    const f = (current = fleet({ workflows: Object.values(workflows(ledger)) }));
    let frozen: string | undefined;
    const doomed = await f.spawn({
      faults: async (point, info) => {
        if (point !== 'before-finish' || frozen !== undefined) return;
        const record = await f.store.runs.get(info.runId);
        if (parentOfKey(record?.idempotencyKey) === undefined) return;
        frozen = info.runId;
        doomed.crash();
        await new Promise(() => undefined);
      },
    });
    const run = await f.client.start(direct, { n: 6 });
    await until(() => frozen !== undefined, 5_000, 'the doomed worker to reach the end of the child');
    await f.spawn();
    expect(await run.result({ timeoutMs: 15_000 })).toBe(60);
    expect(ledger.count(`${frozen}:0`)).toBe(1);
    expect((await entriesOf(f, run.runId)).filter((e) => e.type === 'SignalReceived')).toHaveLength(1);
  });

  it('cancelling the parent cancels a child started with the default policy', async () => {
    const ledger = new Ledger();
    const { waiting } = workflows(ledger);
    const f = (current = fleet({ workflows: Object.values(workflows(ledger)) }));
    await f.spawn();
    const run = await f.client.start(waiting, { policy: 'cancel' });
    const child = await onlyChild(f, run.runId);
    await f.client.cancel(run.runId, 'no longer needed');
    await expect(run.result({ timeoutMs: 10_000 })).rejects.toThrow(/no longer needed/);
    await until(
      async () => (await f.store.runs.get(child.runId))?.status === 'cancelled',
      10_000,
      'the child to be cancelled',
    );
    expect((await f.store.runs.get(child.runId))?.error?.message).toMatch(/parent run \S+ cancelled/);
  });

  it("a child that continues as new is followed: the parent gets its last run's result", async () => {
    const ledger = new Ledger();
    const { loopParent } = workflows(ledger);
    const f = (current = fleet({ workflows: Object.values(workflows(ledger)) }));
    await f.spawn();
    const run = await f.client.start(loopParent, { wait: false });
    // 20 + 10 + 0 from the chain's three runs.
    expect(await run.result({ timeoutMs: 10_000 })).toBe(30);
    const first = (await childrenOf(f, run.runId))[0]!;
    const chain = (await f.store.runs.list({ idempotencyKeyPrefix: 'continue-as-new:', limit: 100 })).runs;
    expect(chain).toHaveLength(2);
    for (const successor of chain) {
      expect(parentOfKey(successor.idempotencyKey)?.runId).toBe(run.runId);
      expect(successor.status).toBe('completed');
    }
    expect(chain.map((r) => r.idempotencyKey)).toContain(
      `continue-as-new:${first.runId}|${childKey(run.runId, parentOfKey(first.idempotencyKey)!.seq)}`,
    );
  });

  it('cancelling the parent cancels the run its child continued as', async () => {
    const ledger = new Ledger();
    const { loopParent } = workflows(ledger);
    const f = (current = fleet({ workflows: Object.values(workflows(ledger)) }));
    await f.spawn();
    const run = await f.client.start(loopParent, { wait: true });
    let last: string | undefined;
    await until(
      async () => {
        const chain = (await f.store.runs.list({ idempotencyKeyPrefix: 'continue-as-new:', limit: 100 }))
          .runs;
        last = chain.find((r) => r.status === 'suspended')?.runId;
        return last !== undefined;
      },
      10_000,
      'the last run of the chain to wait',
    );
    await f.client.cancel(run.runId, 'stop the chain');
    await expect(run.result({ timeoutMs: 10_000 })).rejects.toThrow(/stop the chain/);
    await until(
      async () => (await f.store.runs.get(last!))?.status === 'cancelled',
      10_000,
      "the chain's last run to be cancelled",
    );
  });

  it('an abandoned child runs on after its parent is cancelled, and its end reaches nobody', async () => {
    const ledger = new Ledger();
    const { waiting } = workflows(ledger);
    const f = (current = fleet({ workflows: Object.values(workflows(ledger)) }));
    await f.spawn();
    const run = await f.client.start(waiting, { policy: 'abandon' });
    const child = await onlyChild(f, run.runId);
    await f.client.cancel(run.runId, 'parent gone');
    await expect(run.result({ timeoutMs: 10_000 })).rejects.toThrow(/parent gone/);
    expect((await f.store.runs.get(child.runId))?.status).toBe('suspended');
    await f.client.signal(child.runId, release, null);
    expect(await f.client.result(child.runId, { timeoutMs: 10_000 })).toBe(70);
  });
});
