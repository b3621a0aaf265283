import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { JournalEntry } from '@baton/core/runtime';
import { fleet, Ledger, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

/** A 3-step chain whose middle step blocks until released, so a crash can land inside it. */
function blockingChain(ledger: Ledger) {
  let release: () => void = () => undefined;
  const gate = { open: false, started: 0 };
  const step = defineActivity({
    name: 'step',
    run: async (x: number, io) => {
      ledger.record(io.idempotencyKey);
      if (io.seq === 1 && !gate.open) {
        gate.started++;
        await new Promise<void>((resolve) => (release = resolve));
      }
      return x + 1;
    },
  });
  const workflow = defineWorkflow({
    name: 'chain3',
    version: 1,
    run: async (ctx, x: number) => {
      for (let i = 0; i < 3; i++) x = await ctx.run(step, x);
      return x;
    },
  });
  return { workflow, gate, release: () => release() };
}

/** Starts a blockingChain run on worker A and waits until A is inside step #1. */
async function runUntilStepOne(input: number) {
  const ledger = new Ledger();
  const chain = blockingChain(ledger);
  current = fleet({ workflows: [chain.workflow] });
  const a = await current.spawn();
  const run = await current.client.start(chain.workflow, input);
  await until(() => chain.gate.started === 1, 5_000, 'step #1 to start on worker A');
  return { ...chain, ledger, a, run, f: current };
}

describe('crash recovery (memory adapters)', () => {
  it('completes a run on another worker after a crash mid-activity, re-running only the in-flight step, with the same key', async () => {
    const { ledger, gate, a, run, f } = await runUntilStepOne(10);
    a.crash();
    gate.open = true;
    const b = await f.spawn();

    expect(await run.result({ timeoutMs: 5_000 })).toBe(13);
    const key = (seq: number): string => `${run.runId}:${seq}`;
    expect(ledger.count(key(0))).toBe(1); // completed before the crash: never again
    expect(ledger.count(key(1))).toBe(2); // in flight at the crash: once more, same key
    expect(ledger.count(key(2))).toBe(1);
    expect(b.events).toContainEqual(
      expect.objectContaining({ type: 'run-claimed', via: 'resume', reason: 'reaped' }),
    );
    const described = await f.client.describe(run.runId);
    expect(described.attempts).toBe(2);
  });

  it('fences a zombie: a worker that lost its lease while frozen writes nothing that replay uses', async () => {
    const { gate, release, a, run, f } = await runUntilStepOne(0);
    // A keeps its bus connection but can no longer renew: its lease expires as if it were paused.
    a.store.sever();
    gate.open = true;
    await f.spawn();
    expect(await run.result({ timeoutMs: 5_000 })).toBe(3);

    release(); // the zombie's activity finishes now and it tries to journal the result
    await new Promise((r) => setTimeout(r, 100));
    const history = await f.client.history(run.runId);
    const markers = history.filter((p) => p.entry.type === 'LeaseAcquired').map((p) => p.entry.epoch);
    // The first owner writes no marker record on a bus with optimistic append (nothing precedes
    // it): its LeaseAcquired rides at the head of its first record, beside step 0. The zombie's
    // late append expected the journal it knew and was refused after the new marker.
    expect(markers).toEqual([1, 2]);
    const first = history.filter((p) => p.position === history[0]!.position).map((p) => p.entry.type);
    expect(first.slice(0, 2)).toEqual(['LeaseAcquired', 'ActivityCompleted']);
    const afterTakeover = history.slice(history.findIndex((p) => p.entry.epoch === 2));
    expect(afterTakeover.every((p: { entry: JournalEntry }) => p.entry.epoch === 2)).toBe(true);
    expect(history.at(-1)?.entry.type).toBe('RunCompleted');
  });

  it('marks a run failed, not retried forever, when resumed code is not deterministic', async () => {
    const { a, run, f } = await runUntilStepOne(0);
    a.crash();

    const other = defineActivity({ name: 'other_step', run: () => 0 });
    const changed = defineWorkflow({ name: 'chain3', version: 1, run: async (ctx) => ctx.run(other, null) });
    await f.spawn({ workflows: [changed] });
    const error = await run.result({ timeoutMs: 5_000 }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(
      /step #0 replayed as activity:other_step but the journal recorded activity:step/,
    );
    const described = await f.client.describe(run.runId);
    expect(described.status).toBe('failed');
    expect(described.lease?.state).toBe('finished');
    await new Promise((r) => setTimeout(r, 600)); // longer than a lease: nobody resumes it again
    expect((await f.client.describe(run.runId)).attempts).toBe(2);
  });

  it('fails a run whose journal cannot be decoded instead of resuming it from bad data forever', async () => {
    const { a, run, f } = await runUntilStepOne(0);
    a.crash();
    await f.journal.journal.append({
      runId: run.runId,
      data: new TextEncoder().encode('{"v":7,"entries":[]}'),
    });
    await f.spawn();
    const error = await run.result({ timeoutMs: 5_000 }).catch((e: Error) => e);
    expect((error as Error).message).toMatch(/codec version 7/);
    expect((await f.client.describe(run.runId)).lease?.state).toBe('finished');
  });
});
