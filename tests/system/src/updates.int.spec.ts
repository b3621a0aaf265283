/**
 * Updates (docs/updates.md) through the client on real buses and stores, with two in-process
 * workers: a suspended run is woken and answers, a run busy in an activity answers meanwhile (its
 * owner learns of the request from the store), an update id is applied once, refusals reach the
 * caller with their reasons, a paused run answers once resumed, a finished run refuses. The
 * SIGKILL of an owner between acceptance and answer is crash-updates.fleet.int.spec.ts's.
 */
import { describe, expect, it } from 'vitest';
import {
  defineActivity,
  defineSignal,
  defineUpdate,
  defineWorkflow,
  NotFoundError,
  RunStateError,
} from '@baton/core';
import { UpdateRejectedError, UpdateTimeoutError } from '@baton/client';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { inProcessNamespace, startInProcessWorkers, until } from './in-process.spec-helper.js';

const PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats') },
  { name: 'kafka+postgres', factory: crashEnvironment('postgres', 'kafka') },
];

/** Prices an item; counts its executions by idempotency key, across the test process's workers. */
const priced = new Map<string, number>();
const price = defineActivity({
  name: 'upd_price',
  run: (item: { sku: string; qty: number }, io) => {
    priced.set(io.idempotencyKey, (priced.get(io.idempotencyKey) ?? 0) + 1);
    return item.qty * 10;
  },
});
/** Holds the workflow busy for `ms` (the run stays held by its worker meanwhile). */
const busy = defineActivity({
  name: 'upd_busy',
  run: async (ms: number) => void (await new Promise((resolve) => setTimeout(resolve, ms))),
});
const addItem = defineUpdate<{ sku: string; qty: number }, { total: number }>('upd_add', {
  validate: ({ qty }) => {
    if (!(qty >= 1)) throw new Error(`qty must be at least 1, got ${qty}`);
  },
});
const done = defineSignal<null>('upd_done');

const order = defineWorkflow({
  name: 'upd_order',
  version: 1,
  run: async (ctx, input: { busyMs: number }) => {
    let total = 0;
    ctx.onUpdate(addItem, async (item) => {
      total += await ctx.run(price, item);
      return { total };
    });
    if (input.busyMs > 0) await ctx.run(busy, input.busyMs);
    await ctx.waitForSignal(done);
    return total;
  },
});

const executions = (runId: string): number =>
  [...priced].filter(([key]) => key.startsWith(`${runId}:`)).reduce((sum, [, n]) => sum + n, 0);

for (const pair of PAIRS) {
  describe(`updates on ${pair.name}`, () => {
    const ns = inProcessNamespace(pair.factory, 'updates');
    const status = async (runId: string): Promise<string | undefined> =>
      (await ns.client.describe(runId).catch(() => undefined))?.status;

    it(
      'answers a suspended run and a busy one, applies an id once, and the run keeps what the updates did',
      {
        timeout: 60_000,
      },
      async () => {
        await startInProcessWorkers(ns, { workflows: [order], inProcessWaitMs: 0 });
        const waiting = await ns.client.start(order, { busyMs: 0 });
        await until(async () => (await status(waiting.runId)) === 'suspended', 'the run to suspend');
        expect(await waiting.update(addItem, { sku: 'A', qty: 2 }, { updateId: 'a-2' })).toEqual({
          total: 20,
        });
        expect(await waiting.update(addItem, { sku: 'A', qty: 2 }, { updateId: 'a-2' })).toEqual({
          total: 20,
        });
        expect(await ns.client.update(waiting.runId, addItem, { sku: 'B', qty: 1 })).toEqual({ total: 30 });
        expect(executions(waiting.runId)).toBe(2);

        // Busy in a 3 s activity: its owner reads the request meanwhile and answers at once.
        const working = await ns.client.start(order, { busyMs: 3_000 });
        await until(async () => (await status(working.runId)) === 'running', 'the run to start its activity');
        expect(await working.update(addItem, { sku: 'C', qty: 5 }, { timeoutMs: 20_000 })).toEqual({
          total: 50,
        });
        expect(await status(working.runId)).toBe('running');

        for (const handle of [waiting, working]) await ns.client.signal(handle.runId, done, null);
        expect(await waiting.result({ timeoutMs: 20_000 })).toBe(30);
        expect(await working.result({ timeoutMs: 20_000 })).toBe(50);
        const history = (await ns.client.history(waiting.runId)).map((p) => p.entry.type);
        expect(history.filter((t) => t === 'UpdateAccepted')).toHaveLength(2);
        expect(history.filter((t) => t === 'UpdateCompleted')).toHaveLength(2);
      },
    );

    it(
      'refuses with the reason, answers a paused run once resumed, and refuses a finished one',
      {
        timeout: 60_000,
      },
      async () => {
        await startInProcessWorkers(ns, { workflows: [order], inProcessWaitMs: 0 }, 1);
        const run = await ns.client.start(order, { busyMs: 0 });
        await until(async () => (await status(run.runId)) === 'suspended', 'the run to suspend');
        await expect(ns.client.update(run.runId, 'upd_add', { sku: 'A', qty: 0 })).rejects.toMatchObject({
          code: 'BATON_UPDATE_REJECTED',
          message: expect.stringMatching(/rejected by its validator: qty must be at least 1, got 0/),
        });
        const unknown = await ns.client.update(run.runId, 'upd_remove', {}).catch((err: unknown) => err);
        expect(unknown).toBeInstanceOf(UpdateRejectedError);
        expect(unknown).toMatchObject({ code: 'BATON_UPDATE_UNKNOWN' });
        await expect(
          ns.client.update('upd-no-such-run', addItem, { sku: 'A', qty: 1 }),
        ).rejects.toBeInstanceOf(NotFoundError);

        expect(await run.pause('a test')).toBe('paused');
        const timedOut = await run
          .update(addItem, { sku: 'P', qty: 1 }, { updateId: 'paused-1', timeoutMs: 500 })
          .catch((err: unknown) => err);
        expect(timedOut).toBeInstanceOf(UpdateTimeoutError);
        expect(executions(run.runId)).toBe(0);
        expect(await run.resume()).toBe(true);
        expect(
          await run.update(addItem, { sku: 'P', qty: 1 }, { updateId: 'paused-1', timeoutMs: 20_000 }),
        ).toEqual({
          total: 10,
        });
        expect(executions(run.runId)).toBe(1);

        await ns.client.signal(run.runId, done, null);
        expect(await run.result({ timeoutMs: 20_000 })).toBe(10);
        const late = await run.update(addItem, { sku: 'Z', qty: 1 }).catch((err: unknown) => err);
        expect(late).toBeInstanceOf(RunStateError);
        expect((late as Error).message).toMatch(/has finished \(completed\)/);
        // The kept answer of an id settled before the end is still the answer to a repeat.
        expect(await run.update(addItem, { sku: 'P', qty: 1 }, { updateId: 'paused-1' })).toEqual({
          total: 10,
        });
      },
    );
  });
}
