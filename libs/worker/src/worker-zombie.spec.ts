import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { JournalAppend, Transport } from '@baton/core/adapter';
import { withCapability } from './capabilities.spec-helper.js';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

/**
 * The shared transport as one without optimistic append and without group logs (as Kafka's own
 * journal is): every run is journaled on its own, and zombie writes land.
 */
function withoutOptimisticAppend(transport: Transport): Transport {
  const unfenced = withCapability(transport, 'journal', {
    supportsOptimisticAppend: false,
    append: (append: JournalAppend) => transport.journal.append({ runId: append.runId, data: append.data }),
  });
  return new Proxy(unfenced, {
    get: (target, prop, receiver) => (prop === 'groupLog' ? undefined : Reflect.get(target, prop, receiver)),
  });
}

describe('zombie writes on a transport without optimistic append', () => {
  it('ignores a journal entry written under a stale epoch after a newer LeaseAcquired marker', async () => {
    // What step #1 does depends on which worker's turn it is.
    let turn: 'A' | 'B' | 'C' = 'A';
    let stepOneCalls = 0;
    const step = defineActivity({
      name: 'step',
      run: async (label: string, io) => {
        if (io.seq !== 1) return label;
        stepOneCalls++;
        if (turn === 'B') return new Promise<string>(() => undefined); // B dies inside it
        return turn === 'A' ? 'zombie' : 'fresh';
      },
    });
    const wf = defineWorkflow({
      name: 'two',
      version: 1,
      run: async (ctx) => [await ctx.run(step, 'first'), await ctx.run(step, 'second')],
    });
    current = fleet({ workflows: [wf] }, withoutOptimisticAppend);
    const f = current;

    // A finishes step #1 but freezes in the middle of journaling it (as under SIGSTOP).
    let unfreeze: () => void = () => undefined;
    let frozen = false;
    const a = await f.spawn({
      faults: async (point, info) => {
        if (point !== 'before-journal-append' || frozen || !info.entryTypes?.includes('ActivityCompleted'))
          return;
        if (stepOneCalls === 0) return;
        frozen = true;
        await new Promise<void>((resolve) => (unfreeze = resolve));
      },
    });
    const run = await f.client.start(wf, null);
    await until(() => frozen, 5_000, 'A to freeze while journaling step #1');
    a.store.sever(); // its lease runs out meanwhile
    turn = 'B';
    const b = await f.spawn();
    await until(() => stepOneCalls === 2, 5_000, 'step #1 on B');

    unfreeze(); // A thaws and its stale append lands after B's marker
    await until(
      async () =>
        (await f.client.history(run.runId)).some(
          (p) => p.entry.type === 'ActivityCompleted' && p.entry.epoch === 1 && p.entry.seq === 1,
        ),
      5_000,
      'the zombie write to land',
    );
    b.crash();
    turn = 'C';
    await f.spawn();

    expect(await run.result({ timeoutMs: 5_000 })).toEqual(['first', 'fresh']);
    const history = await f.client.history(run.runId);
    const epochs = history.filter((p) => p.entry.type === 'LeaseAcquired').map((p) => p.entry.epoch);
    expect(epochs).toEqual([1, 2, 3]);
    expect(stepOneCalls).toBe(3);
  });
});

describe('a worker frozen past its lease', () => {
  it('starts no activity on waking: the step a newer owner completed meanwhile runs once', async () => {
    let calls = 0;
    const step = defineActivity({
      name: 'effect',
      run: async () => {
        calls++;
        return calls;
      },
    });
    const wf = defineWorkflow({ name: 'frozen', version: 1, run: async (ctx) => ctx.run(step, null) });
    current = fleet({ workflows: [wf] });
    const f = current;

    // A acquires the run's first lease and freezes there, as a SIGSTOPped process would: its
    // timers stop with it, so nothing renews the lease and nothing notices it ran out.
    let unfreeze: () => void = () => undefined;
    let frozen = false;
    const a = await f.spawn({
      faults: async (point, info) => {
        if (point !== 'lease-acquired' || frozen || info.epoch !== 1) return;
        frozen = true;
        await new Promise<void>((resolve) => (unfreeze = resolve));
      },
    });
    const run = await f.client.start(wf, null);
    await until(() => frozen, 5_000, 'A to freeze holding the first lease');
    await f.spawn();
    // The lease ran out; a newer owner (B, or A's own reaper and claim loop) ran the step.
    expect(await run.result({ timeoutMs: 5_000 })).toBe(1);

    unfreeze();
    const endOfFirstSession = (): boolean =>
      a.events.some((e) => e.type === 'run-aborted' && e.runId === run.runId && e.epoch === 1);
    await until(endOfFirstSession, 5_000, "A's first session to end on waking");
    expect(calls).toBe(1);
    // It stopped because it found the lease lost, before the step, not at a fenced append after it.
    expect(a.events).toContainEqual({ type: 'lease-lost', runId: run.runId, epoch: 1 });
    expect(await run.result({ timeoutMs: 1_000 })).toBe(1);
  });
});
