import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineQuery, defineSignal, defineWorkflow } from '@baton/core';
import { QueryFailedError, QueryTimeoutError, UnknownQueryError } from '@baton/client';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const status = defineQuery<{ stage: string; items: string[] }>('status');
const itemAt = defineQuery<string | null, { index: number }>('itemAt');
const sneaky = defineQuery<number>('sneaky');
/** True when answered by a replay (its executor is still replaying), false from a live run's memory. */
const replaying = defineQuery<boolean>('replaying');
const proceed = defineSignal<string>('proceed');

/** Executions of `add`, so a query that ran an activity is caught. */
let added = 0;
let gate: Promise<void> = Promise.resolve();
/** Set once an execution of `add` began: a live run, past its replay. */
let entered = false;
const add = defineActivity({
  name: 'add',
  run: async (item: string) => {
    entered = true;
    await gate;
    added++;
    return item;
  },
});

/** Adds two items, waits for a signal, adds its payload; its queries read what it has. */
const basket = defineWorkflow({
  name: 'basket',
  version: 1,
  run: async (ctx) => {
    let stage = 'filling';
    const items: string[] = [];
    ctx.onQuery(status, () => ({ stage, items }));
    ctx.onQuery(itemAt, ({ index }) => items[index] ?? null);
    ctx.onQuery(replaying, () => ctx.isReplaying);
    ctx.onQuery(sneaky, () => {
      void ctx.run(add, 'from a query');
      return items.length;
    });
    items.push(await ctx.run(add, 'apple'));
    items.push(await ctx.run(add, 'pear'));
    stage = 'waiting';
    items.push(await ctx.waitForSignal(proceed));
    stage = 'done';
    return items;
  },
});

async function suspended(f: Fleet, runId: string): Promise<void> {
  await until(async () => (await f.client.describe(runId).catch(() => undefined))?.status === 'suspended');
}

describe('queries (memory adapters)', () => {
  it('answers a held run from memory, its answer following the run as it advances', async () => {
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    entered = false;
    current = fleet({ workflows: [basket] });
    await current.spawn();
    const run = await current.client.start(basket, null);
    await until(() => entered, 5_000, 'the first step under way');
    expect(await run.query(status)).toEqual({ stage: 'filling', items: [] });
    expect(await run.query(replaying)).toBe(false);
    open();
    await suspended(current, run.runId);
    expect(await current.client.query(run.runId, status)).toEqual({
      stage: 'waiting',
      items: ['apple', 'pear'],
    });
    expect(await current.client.query(run.runId, itemAt, { index: 1 })).toBe('pear');
  });

  it('answers a suspended and a finished run by replay, running and writing nothing', async () => {
    gate = Promise.resolve();
    current = fleet({ workflows: [basket] });
    await current.spawn();
    const run = await current.client.start(basket, null);
    await suspended(current, run.runId);
    const before = (await current.client.history(run.runId)).length;
    const ran = added;
    expect(await run.query(status)).toEqual({ stage: 'waiting', items: ['apple', 'pear'] });
    expect(await run.query(itemAt, { index: 0 })).toBe('apple');
    expect(await run.query(replaying)).toBe(true);
    expect(added).toBe(ran);
    expect((await current.client.history(run.runId)).length).toBe(before);
    expect((await current.client.describe(run.runId)).status).toBe('suspended');

    await current.client.signal(run.runId, proceed, 'plum');
    expect(await run.result({ timeoutMs: 5_000 })).toEqual(['apple', 'pear', 'plum']);
    expect(await run.query(status)).toEqual({ stage: 'done', items: ['apple', 'pear', 'plum'] });
    expect(added).toBe(ran);
  });

  it('refuses a handler that calls ctx.run, and the run goes on as if it had not been asked', async () => {
    gate = Promise.resolve();
    current = fleet({ workflows: [basket] });
    await current.spawn();
    const run = await current.client.start(basket, null);
    await suspended(current, run.runId);
    const ran = added;
    const refused = await run.query(sneaky).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(QueryFailedError);
    expect((refused as QueryFailedError).failure).toMatchObject({ name: 'QueryReadOnlyError' });
    expect((refused as Error).message).toMatch(
      /query 'sneaky' of run .* failed: QueryReadOnlyError: query 'sneaky' called ctx.run/,
    );
    expect(added).toBe(ran);
    await current.client.signal(run.runId, proceed, 'fig');
    expect(await run.result({ timeoutMs: 5_000 })).toEqual(['apple', 'pear', 'fig']);
    expect(added).toBe(ran);
  });

  it('refuses an unknown query name, listing the names the run registers', async () => {
    gate = Promise.resolve();
    current = fleet({ workflows: [basket] });
    await current.spawn();
    const run = await current.client.start(basket, null);
    await suspended(current, run.runId);
    const refused = await current.client.query(run.runId, 'stauts').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UnknownQueryError);
    expect((refused as UnknownQueryError).registered).toEqual(['itemAt', 'replaying', 'sneaky', 'status']);
    expect((refused as Error).message).toContain(
      "has no handler for query 'stauts': it registers 'itemAt', 'replaying', 'sneaky', 'status'",
    );
  });

  it("falls back to a replay when the holder does not answer (its store calls hang, as a frozen process's do)", async () => {
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    current = fleet({ workflows: [basket] });
    // A lease that outlives the spec: the run stays held by the frozen worker, nobody takes it over.
    const holder = await current.spawn({ leaseMs: 30_000, heartbeatMs: 1_000 });
    const run = await current.client.start(basket, null);
    await until(
      async () => (await current!.client.describe(run.runId)).lease?.owner === holder.worker.workerId,
    );
    await current.spawn();
    holder.crash();
    // Held (its lease has not expired yet) by a worker that never answers: another replays it.
    expect(await run.query(status, undefined, { timeoutMs: 3_000 })).toEqual({ stage: 'filling', items: [] });
    expect(await run.query(replaying, undefined, { timeoutMs: 3_000 })).toBe(true);
    open();
  });

  it('times out with a clear error when no worker registers the run', async () => {
    gate = Promise.resolve();
    current = fleet({ workflows: [basket] });
    await current.spawn();
    const run = await current.client.start(basket, null);
    await suspended(current, run.runId);
    await current.shutdown();
    const refused = await run.query(status, undefined, { timeoutMs: 300 }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(QueryTimeoutError);
    expect((refused as Error).message).toMatch(
      /no worker listens for queries; start one that registers basket@1/,
    );
    current = undefined;
  });

  it('refuses a bad query name or timeout before asking, and a client without a store', async () => {
    current = fleet({ workflows: [basket] });
    await expect(current.client.query('run-1', 'two words')).rejects.toThrow(
      /query name "two words" is invalid/,
    );
    await expect(current.client.query('run-1', status, undefined, { timeoutMs: 0 })).rejects.toThrow(
      /timeoutMs is 0; give 1 to 600000 ms/,
    );
    await expect(current.client.query('no-such-run', status)).rejects.toThrow(/not known to the store/);
    const { Client } = await import('@baton/client');
    const producer = new Client({ transport: current.transport });
    await expect(producer.query('run-1', status)).rejects.toThrow(
      /client.query\(\) reads the store: create the Client with \{ transport, store \}/,
    );
  });
});
