/**
 * Updates through the worker and the client (memory adapters; the real buses and stores are
 * covered by tests/system/src/updates.int.spec.ts, a SIGKILL of the owner by
 * crash-updates.fleet.int.spec.ts): a suspended run is woken and answers, a busy one answers
 * while its workflow's activity still runs, a paused one once resumed, an id is applied once, and
 * every refusal reaches the caller with its reason.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  defineActivity,
  defineSignal,
  defineUpdate,
  defineWorkflow,
  InvalidInputError,
  NotFoundError,
  RunStateError,
  type StandardSchemaV1,
} from '@baton/core';
import { resolvePayloadProtection } from '@baton/core/runtime';
import { UpdateFailedError, UpdateRejectedError, UpdateTimeoutError } from '@baton/client';
import { fleet, Ledger, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const qtySchema: StandardSchemaV1<unknown, { sku: string; qty: number }> = {
  '~standard': {
    version: 1,
    vendor: 'baton-spec',
    validate: (value) => {
      const v = (value ?? {}) as { sku?: unknown; qty?: unknown };
      return typeof v.sku === 'string' && typeof v.qty === 'number'
        ? { value: { sku: v.sku, qty: v.qty } }
        : { issues: [{ message: 'expected { sku: string, qty: number }' }] };
    },
  },
};
const addItem = defineUpdate<{ sku: string; qty: number }, { total: number; lines: number }>('add_item', {
  schema: qtySchema,
  validate: ({ qty }) => {
    if (qty < 1) throw new Error(`qty must be at least 1, got ${qty}`);
  },
});
const checkout = defineSignal<null>('checkout');

/**
 * An order: each added item is priced by an activity (counted in `priced` by idempotency key);
 * `busy` holds the workflow in an activity until released; checkout ends it with the total.
 */
function orderWorkflow(options: { busy?: boolean } = {}) {
  const priced = new Ledger();
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const price = defineActivity({
    name: 'price',
    run: (item: { sku: string; qty: number }, io) => (priced.record(io.idempotencyKey), item.qty * 10),
  });
  const holding = new Ledger();
  const hold = defineActivity({
    name: 'hold',
    run: async (_: null, io) => {
      holding.record(io.idempotencyKey);
      await held;
    },
  });
  const workflow = defineWorkflow({
    name: 'order',
    version: 1,
    run: async (ctx) => {
      let total = 0;
      let lines = 0;
      let closed = false;
      ctx.onUpdate(
        addItem,
        async (item) => {
          if (item.sku === 'BROKEN') throw new Error('no such sku');
          total += await ctx.run(price, item);
          lines++;
          return { total, lines };
        },
        {
          validate: () => {
            if (closed) throw new Error('the order is closed');
          },
        },
      );
      if (options.busy === true) await ctx.run(hold, null);
      await ctx.waitForSignal(checkout);
      closed = true;
      return { total, lines };
    },
  });
  return { workflow, priced, holding, release: () => release() };
}

/** Every execution the ledger saw, over all keys. */
function executions(ledger: Ledger): number {
  return [...ledger.executions.values()].reduce((a, b) => a + b, 0);
}

async function suspended(f: Fleet, runId: string): Promise<void> {
  await until(
    async () => (await f.client.describe(runId).catch(() => undefined))?.status === 'suspended',
    5_000,
    `run ${runId} suspended`,
  );
}

describe('updates (memory adapters)', () => {
  it('wakes a suspended run, answers with the handler result, and the run keeps what it changed', async () => {
    const { workflow, priced } = orderWorkflow();
    current = fleet({ workflows: [workflow] });
    await current.spawn();
    const run = await current.client.start(workflow, null);
    await suspended(current, run.runId);
    expect(await current.client.update(run.runId, addItem, { sku: 'A', qty: 2 })).toEqual({
      total: 20,
      lines: 1,
    });
    expect(await run.update(addItem, { sku: 'B', qty: 1 }, { timeoutMs: 5_000 })).toEqual({
      total: 30,
      lines: 2,
    });
    await current.client.signal(run.runId, checkout, null);
    expect(await run.result({ timeoutMs: 5_000 })).toEqual({ total: 30, lines: 2 });
    expect(executions(priced)).toBe(2);
    const history = (await current.client.history(run.runId)).map((p) => p.entry.type);
    expect(history.filter((t) => t === 'UpdateAccepted')).toHaveLength(2);
    expect(history.filter((t) => t === 'UpdateCompleted')).toHaveLength(2);
  });

  it('answers a run that is busy in an activity, while the activity still runs', async () => {
    const { workflow, release, holding } = orderWorkflow({ busy: true });
    current = fleet({ workflows: [workflow] });
    await current.spawn();
    const run = await current.client.start(workflow, null);
    await until(() => executions(holding) === 1, 5_000, 'the workflow in its activity');
    expect(await run.update(addItem, { sku: 'A', qty: 1 }, { timeoutMs: 5_000 })).toEqual({
      total: 10,
      lines: 1,
    });
    expect((await current.client.describe(run.runId)).status).toBe('running');
    release();
    await suspended(current, run.runId);
    await current.client.signal(run.runId, checkout, null);
    expect(await run.result({ timeoutMs: 5_000 })).toEqual({ total: 10, lines: 1 });
  });

  it('applies an update id once: a repeat is answered with the kept result and runs nothing', async () => {
    const { workflow, priced } = orderWorkflow();
    current = fleet({ workflows: [workflow] });
    await current.spawn();
    const run = await current.client.start(workflow, null);
    await suspended(current, run.runId);
    const first = await run.update(addItem, { sku: 'A', qty: 1 }, { updateId: 'add-A' });
    const again = await run.update(addItem, { sku: 'A', qty: 1 }, { updateId: 'add-A' });
    const racing = await Promise.all(
      [1, 2, 3].map(() =>
        current!.client.update(run.runId, addItem, { sku: 'C', qty: 1 }, { updateId: 'add-C' }),
      ),
    );
    expect(again).toEqual(first);
    expect(new Set(racing.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(executions(priced)).toBe(2);
  });

  it('refuses, with the reason: bad arguments, a validator, an unknown name, a failed handler', async () => {
    const { workflow, priced } = orderWorkflow();
    current = fleet({ workflows: [workflow] });
    await current.spawn();
    const run = await current.client.start(workflow, null);
    await suspended(current, run.runId);
    const client = current.client;
    // Checked by the client first: nothing is sent.
    await expect(client.update(run.runId, addItem, { sku: 'A' } as never)).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(client.update(run.runId, addItem, { sku: 'A', qty: 0 })).rejects.toThrow(
      /rejected by its validator: qty must be at least 1, got 0 \(checked before sending/,
    );
    // By name (as the CLI and the HTTP API send it): the worker checks schema and validators.
    await expect(client.update(run.runId, 'add_item', { sku: 'A', qty: 0 })).rejects.toMatchObject({
      name: 'UpdateRejectedError',
      code: 'BATON_UPDATE_REJECTED',
      message: expect.stringMatching(/rejected by its validator: qty must be at least 1, got 0$/),
    });
    await expect(client.update(run.runId, 'add_item', 'not an item')).rejects.toThrow(
      /do not match the update's schema: \$: expected \{ sku: string, qty: number \}/,
    );
    const unknown = await client.update(run.runId, 'remove_item', null).catch((err: unknown) => err);
    expect(unknown).toBeInstanceOf(UpdateRejectedError);
    expect(unknown).toMatchObject({ code: 'BATON_UPDATE_UNKNOWN', update: 'remove_item' });
    expect((unknown as Error).message).toMatch(
      /has no handler for update 'remove_item'; it handles 'add_item'/,
    );
    const failed = await run.update(addItem, { sku: 'BROKEN', qty: 1 }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(UpdateFailedError);
    expect((failed as UpdateFailedError).failure).toMatchObject({ name: 'Error', message: 'no such sku' });
    expect(executions(priced)).toBe(0);
    // None of the refusals is in the run's history; the failed handler's acceptance is.
    const accepted = (await client.history(run.runId)).filter((p) => p.entry.type === 'UpdateAccepted');
    expect(accepted).toHaveLength(1);
    // The workflow's own validator sees its state: after checkout nothing is added.
    await client.signal(run.runId, checkout, null);
    expect(await run.result({ timeoutMs: 5_000 })).toEqual({ total: 0, lines: 0 });
  });

  it('refuses a finished run and an unknown one before waiting', async () => {
    const quick = defineWorkflow({ name: 'quick', version: 1, run: async () => 'done' });
    current = fleet({ workflows: [quick] });
    await current.spawn();
    const run = await current.client.start(quick, null);
    await run.result({ timeoutMs: 5_000 });
    const finished = await current.client.update(run.runId, 'anything', null).catch((err: unknown) => err);
    expect(finished).toBeInstanceOf(RunStateError);
    expect((finished as Error).message).toMatch(
      /has finished \(completed\); a finished run takes no updates/,
    );
    await expect(current.client.update('no-such-run', 'anything', null)).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('answers a run paused when the update came once it is resumed; a repeat gets the kept result', async () => {
    const { workflow, priced } = orderWorkflow();
    current = fleet({ workflows: [workflow] });
    await current.spawn();
    const run = await current.client.start(workflow, null);
    await suspended(current, run.runId);
    expect(await run.pause('looking into it')).toBe('paused');
    const waited = await run
      .update(addItem, { sku: 'P', qty: 4 }, { updateId: 'while-paused', timeoutMs: 600 })
      .catch((err: unknown) => err);
    expect(waited).toBeInstanceOf(UpdateTimeoutError);
    expect((waited as Error).message).toMatch(/call again with \{ updateId: 'while-paused' \}/);
    expect(executions(priced)).toBe(0);
    expect(await run.resume()).toBe(true);
    expect(await run.update(addItem, { sku: 'P', qty: 4 }, { updateId: 'while-paused' })).toEqual({
      total: 40,
      lines: 1,
    });
    expect(executions(priced)).toBe(1);
    await current.client.signal(run.runId, checkout, null);
    expect(await run.result({ timeoutMs: 5_000 })).toEqual({ total: 40, lines: 1 });
  });

  it('refuses an update the run ends without handling', async () => {
    const workflow = defineWorkflow({
      name: 'no_handlers',
      version: 1,
      run: async (ctx) => void (await ctx.waitForSignal(checkout)),
    });
    current = fleet({ workflows: [workflow] });
    await current.spawn();
    const run = await current.client.start(workflow, null);
    await suspended(current, run.runId);
    // Woken for the request: a workflow without handlers refuses it as unknown.
    await expect(run.update('anything', 1)).rejects.toMatchObject({ code: 'BATON_UPDATE_UNKNOWN' });
    expect(await current.store.updates.pending(run.runId)).toEqual([]);
  });

  it('seals the arguments and the result in the store when payloads are encrypted', async () => {
    const protection = resolvePayloadProtection({
      encryptionKeys: `k1:${randomBytes(32).toString('base64')}`,
    });
    const { workflow } = orderWorkflow();
    current = fleet({ workflows: [workflow], payloadProtection: protection });
    await current.spawn();
    const run = await current.client.start(workflow, null);
    await suspended(current, run.runId);
    expect(await run.update(addItem, { sku: 'SECRET-SKU', qty: 1 }, { updateId: 'sealed' })).toEqual({
      total: 10,
      lines: 1,
    });
    const kept = await current.store.updates.outcome(run.runId, 'sealed');
    expect(JSON.stringify(kept)).not.toMatch(/"total"/);
    expect(JSON.stringify(kept)).toMatch(/\$baton\.sealed/);
  });
});
