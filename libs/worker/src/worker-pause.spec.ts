/**
 * Pause and resume through the worker (memory adapters): a run paused mid-activity journals that
 * activity's result and starts nothing more; a paused run is run by no worker, reaper or timer
 * until it is resumed, keeps its signals, and can still be cancelled; an owner that dies before it
 * stops for its pause leaves the run paused, not resumed elsewhere.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { WorkerEvent } from './events.js';
import { fleet, Ledger, until, type Fleet } from './fleet.spec-helper.js';
import { silentLogger, type Logger } from './logger.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

/** Several lease periods of the fleet (400 ms leases, 50 ms reaper): long enough for anyone to act. */
const SEVERAL_LEASES_MS = 1_500;

/**
 * Three steps; step #0 blocks until released. Ledger counts every start and every completion by
 * idempotency key, so a test sees what ran from outside the worker.
 */
function gatedChain() {
  const started = new Ledger();
  const completed = new Ledger();
  let release: () => void = () => undefined;
  const gate = { entered: 0 };
  const step = defineActivity({
    name: 'pause_step',
    run: async (x: number, io) => {
      started.record(io.idempotencyKey);
      if (io.seq === 0 && gate.entered === 0) {
        gate.entered++;
        await new Promise<void>((resolve) => (release = resolve));
      }
      completed.record(io.idempotencyKey);
      return x + 1;
    },
  });
  const workflow = defineWorkflow({
    name: 'pause_chain',
    version: 1,
    run: async (ctx, x: number) => {
      for (let i = 0; i < 3; i++) x = await ctx.run(step, x);
      return x;
    },
  });
  return { workflow, gate, started, completed, release: () => release() };
}

/** A logger that records the messages of its info lines. */
function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: { ...silentLogger, info: (_obj, msg) => lines.push(msg ?? '') }, lines };
}

async function statusOf(f: Fleet, runId: string): Promise<string | undefined> {
  return (await f.store.runs.get(runId))?.status;
}

describe('pause and resume (memory adapters)', () => {
  it('pauses a run mid-activity after journaling that activity, starts nothing more, and completes on resume', async () => {
    const chain = gatedChain();
    const { logger, lines } = recordingLogger();
    current = fleet({ workflows: [chain.workflow], logger });
    const worker = await current.spawn();
    const run = await current.client.start(chain.workflow, 10);
    await until(() => chain.gate.entered === 1, 5_000, 'step #0 to start');

    expect(await run.pause('inspect the ledger')).toBe('pause-requested');
    const requested = await current.client.describe(run.runId);
    expect(requested.status).toBe('running');
    expect(requested.lease).toMatchObject({ pauseRequested: true, pauseReason: 'inspect the ledger' });
    // The session learns of the request from its next renewal; only then is the activity let go.
    await until(
      () => lines.includes('pause requested; stopping at the next step'),
      5_000,
      'the session to see the pause',
    );
    chain.release();
    await until(async () => (await statusOf(current!, run.runId)) === 'paused', 5_000, 'the run to pause');

    const key = (seq: number): string => `${run.runId}:${seq}`;
    const journal = (await current.client.history(run.runId)).map((p) => p.entry);
    expect(journal).toContainEqual(
      expect.objectContaining({ type: 'ActivityCompleted', seq: 0, result: 11 }),
    );
    expect(journal.some((e) => e.type === 'ActivityCompleted' && e.seq === 1)).toBe(false);
    expect(chain.started.count(key(1))).toBe(0);
    expect((await current.store.leases.get(run.runId))?.state).toBe('paused');
    expect(worker.events).toContainEqual({ type: 'run-paused', runId: run.runId, epoch: 1 });

    // Paused stays paused: no reaper or worker picks it up over several lease periods.
    await sleep(SEVERAL_LEASES_MS);
    expect(await statusOf(current, run.runId)).toBe('paused');
    expect(chain.started.count(key(1))).toBe(0);

    expect(await run.resume()).toBe(true);
    expect(await run.result({ timeoutMs: 5_000 })).toBe(13);
    for (const seq of [0, 1, 2]) expect(chain.completed.count(key(seq))).toBe(1);
  });

  it('keeps a paused sleeping run asleep past its timer; resumed, it wakes at once', async () => {
    const ledger = new Ledger();
    const after = defineActivity({
      name: 'after_sleep',
      run: (_: null, io) => {
        ledger.record(io.idempotencyKey);
        return 'woke';
      },
    });
    const workflow = defineWorkflow({
      name: 'pause_sleeper',
      version: 1,
      run: async (ctx) => {
        await ctx.sleep(300);
        return ctx.run(after, null);
      },
    });
    current = fleet({ workflows: [workflow] });
    await current.spawn();
    const run = await current.client.start(workflow, null);
    await until(async () => (await statusOf(current!, run.runId)) === 'suspended', 5_000, 'the run to sleep');
    expect(await current.client.runs.pause(run.runId)).toBe('paused');
    expect((await current.client.describe(run.runId)).lease).toMatchObject({ state: 'paused', owner: null });

    await sleep(SEVERAL_LEASES_MS); // the sleep's 300 ms are long past
    expect(await statusOf(current, run.runId)).toBe('paused');
    expect(ledger.executions.size).toBe(0);

    expect(await current.client.runs.resume(run.runId)).toBe(true);
    expect(await run.result({ timeoutMs: 5_000 })).toBe('woke');
    expect([...ledger.executions.values()]).toEqual([1]);
  });

  it('keeps a signal sent to a paused run, and the resumed run receives it', async () => {
    const workflow = defineWorkflow({
      name: 'pause_waiter',
      version: 1,
      run: async (ctx) => `got ${await ctx.waitForSignal<string>('go')}`,
    });
    current = fleet({ workflows: [workflow] });
    await current.spawn();
    const run = await current.client.start(workflow, null);
    await until(async () => (await statusOf(current!, run.runId)) === 'suspended', 5_000, 'the run to wait');
    expect(await run.pause()).toBe('paused');
    await current.client.signal(run.runId, 'go', 'green');
    await until(
      async () => (await current!.store.signals.read(run.runId)).length === 1,
      5_000,
      'the signal kept',
    );
    await sleep(SEVERAL_LEASES_MS);
    expect(await statusOf(current, run.runId)).toBe('paused');

    expect(await run.resume()).toBe(true);
    expect(await run.result({ timeoutMs: 5_000 })).toBe('got green');
  });

  it('cancels a paused run: the cancel wins, and the run ends cancelled with its reason', async () => {
    const workflow = defineWorkflow({
      name: 'pause_cancelled',
      version: 1,
      run: async (ctx) => ctx.waitForSignal<string>('never'),
    });
    current = fleet({ workflows: [workflow] });
    await current.spawn();
    const run = await current.client.start(workflow, null);
    await until(async () => (await statusOf(current!, run.runId)) === 'suspended', 5_000, 'the run to wait');
    expect(await run.pause()).toBe('paused');
    await current.client.cancel(run.runId, 'not needed after all');
    await expect(run.result({ timeoutMs: 5_000 })).rejects.toMatchObject({
      name: 'CancelledError',
      reason: 'not needed after all',
    });
    await expect(run.pause()).rejects.toMatchObject({ name: 'RunStateError', status: 'cancelled' });
    await expect(run.resume()).rejects.toMatchObject({ name: 'RunStateError', status: 'cancelled' });
  });

  it('leaves a run paused when its owner dies before it stops for the pause; resumed, it completes elsewhere', async () => {
    const chain = gatedChain();
    current = fleet({ workflows: [chain.workflow] });
    const a = await current.spawn();
    const run = await current.client.start(chain.workflow, 1);
    await until(() => chain.gate.entered === 1, 5_000, 'step #0 to start on worker A');
    expect(await run.pause()).toBe('pause-requested');
    a.crash();
    const b = await current.spawn();
    // B's reaper finds A's lease expired and re-sends the run; the claim finds it paused.
    await until(async () => (await statusOf(current!, run.runId)) === 'paused', 5_000, 'the run to pause');
    await sleep(SEVERAL_LEASES_MS);
    expect(await statusOf(current, run.runId)).toBe('paused');
    expect(b.events.some((e: WorkerEvent) => e.type === 'run-claimed' && e.runId === run.runId)).toBe(false);

    expect(await run.resume()).toBe(true);
    expect(await run.result({ timeoutMs: 5_000 })).toBe(4);
    const key = (seq: number): string => `${run.runId}:${seq}`;
    // Step #0 never completed on A (it died inside it): it ran to completion once, on B.
    for (const seq of [0, 1, 2]) expect(chain.completed.count(key(seq))).toBe(1);
    expect(b.events).toContainEqual(expect.objectContaining({ type: 'run-completed', runId: run.runId }));
  });

  it('withdraws a pause request on resume before the run reached it', async () => {
    const chain = gatedChain();
    current = fleet({ workflows: [chain.workflow] });
    await current.spawn({ heartbeatMs: 100 });
    const run = await current.client.start(chain.workflow, 0);
    await until(() => chain.gate.entered === 1, 5_000, 'step #0 to start');
    // Both before the session can act on it: the session never sees a request, or sees it withdrawn.
    expect(await run.pause()).toBe('pause-requested');
    expect(await run.resume()).toBe(true);
    expect((await run.describe()).lease?.pauseRequested).toBeUndefined();
    chain.release();
    expect(await run.result({ timeoutMs: 5_000 })).toBe(3);
  });

  it('refuses to pause or resume a finished run, and an unknown one', async () => {
    const workflow = defineWorkflow({ name: 'pause_quick', version: 1, run: async () => 'done' });
    current = fleet({ workflows: [workflow] });
    await current.spawn();
    const run = await current.client.start(workflow, null);
    expect(await run.result({ timeoutMs: 5_000 })).toBe('done');
    await expect(run.pause()).rejects.toMatchObject({
      name: 'RunStateError',
      status: 'completed',
      message: expect.stringContaining('a finished run cannot be paused'),
    });
    await expect(run.resume()).rejects.toMatchObject({ name: 'RunStateError', status: 'completed' });
    await expect(current.client.runs.pause('no-such-run')).rejects.toMatchObject({ name: 'NotFoundError' });
    await expect(current.client.runs.resume('no-such-run')).rejects.toMatchObject({ name: 'NotFoundError' });
  });
});
