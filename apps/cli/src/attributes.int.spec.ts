/**
 * Search attributes end to end (docs/search-attributes.md) on NATS + Redis and NATS + Postgres: a
 * real Worker runs a workflow that sets attributes, suspends and resumes (so its first steps are
 * replayed), and the runs are found through the client (list, count, describe) and the CLI run in
 * process (`runs list --attr`, `runs count --attr`, `runs describe`, and a bulk `runs cancel
 * --attr`). The store's attribute writes are counted: each ctx.setAttributes reached the store once,
 * though its step was replayed after the resume.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { Store } from '@baton/core/adapter';
import { natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { Worker } from '@baton/worker';
import { operatorAdapters, readOperatorConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';
// The code of the adapters operatorAdapters builds below (the CLI loads it with loadAdapterCode).
import '@baton/store-redis';
import '@baton/store-postgres';
import '@baton/transport-nats';
import { runCli } from './program.js';

const lookup = defineActivity({
  name: 'attr_lookup',
  run: (customerId: string) => ({
    tier: customerId.endsWith('1') ? 'gold' : 'basic',
    total: customerId.length * 10,
  }),
});

const order = defineWorkflow({
  name: 'attr_order',
  version: 1,
  attributes: {
    customerId: 'keyword',
    tier: 'keyword',
    total: 'number',
    shipped: 'boolean',
    placedAt: 'time',
  },
  run: async (ctx, input: { customerId: string }) => {
    await ctx.setAttributes({ customerId: input.customerId, placedAt: new Date(1_764_000_000_000) });
    const customer = await ctx.run(lookup, input.customerId);
    await ctx.setAttributes({ tier: customer.tier, total: customer.total });
    // Suspends until signalled: the resume replays the steps above.
    const shipped = await ctx.waitForSignal<boolean>('shipped');
    await ctx.setAttributes({ shipped });
    return customer.tier;
  },
});

/** The store, with its attribute writes counted (the worker's view of it). */
function countingWrites(store: Store): { store: Store; writes: () => number } {
  let writes = 0;
  const attributes = {
    set: (...args: Parameters<Store['attributes']['set']>) => {
      writes += 1;
      return store.attributes.set(...args);
    },
    count: (...args: Parameters<Store['attributes']['count']>) => store.attributes.count(...args),
  };
  const counted = new Proxy(store, {
    get: (target, property, receiver) =>
      property === 'attributes' ? attributes : (Reflect.get(target, property, receiver) as unknown),
  });
  return { store: counted, writes: () => writes };
}

const PAIRS = [
  { name: 'nats+redis', storeUrl: redisTestUrl },
  { name: 'nats+postgres', storeUrl: postgresTestUrl },
];

describe.each(PAIRS)('search attributes through the client and the CLI on $name', ({ storeUrl: urlOf }) => {
  const ns = `attr${randomBytes(4).toString('hex')}`;
  const bus = natsTestUrl();
  const storeUrl = urlOf();
  const env: Record<string, string> = {
    BATON_TRANSPORT_URL: bus,
    BATON_STORE_URL: storeUrl,
    ...isolatedEnv('transport', bus, ns),
    ...isolatedEnv('store', storeUrl, ns),
  };
  const adapters = operatorAdapters(readOperatorConfig(env));
  const client = new Client({ transport: adapters.transport, store: adapters.store });
  const counted = countingWrites(adapters.store);
  let worker: Worker;

  const baton = async (...argv: string[]): Promise<{ code: number; out: string; err: string }> => {
    let out = '';
    let err = '';
    const code = await runCli(argv, { env, io: { out: (t) => (out += t), err: (t) => (err += t) } });
    return { code, out, err };
  };

  const until = async (runId: string, status: string): Promise<void> => {
    const deadline = Date.now() + 20_000;
    while ((await adapters.store.runs.get(runId))?.status !== status) {
      if (Date.now() > deadline) throw new Error(`run ${runId} is not ${status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(async () => {
    await client.connect();
    worker = new Worker({
      transport: adapters.transport,
      store: counted.store,
      workflows: [order],
      fetchWaitMs: 100,
      inProcessWaitMs: 0,
      drainTimeoutMs: 2_000,
    });
    await worker.start();
  }, 60_000);

  afterAll(async () => {
    await worker.stop();
    await adapters.close();
    await removeIsolated('transport', bus, ns);
    await removeIsolated('store', storeUrl, ns);
  }, 60_000);

  it(
    'sets attributes once each across a resume; lists, counts and describes runs by them; acts in bulk',
    { timeout: 90_000 },
    async () => {
      const customers = ['c-11', 'c-21', 'c-30', 'c-41'];
      const runs = await Promise.all(customers.map((customerId) => client.start(order, { customerId })));
      for (const run of runs) await until(run.runId, 'suspended');
      // Two runs go on to the end (resumed: their first steps are replayed, not written again).
      await client.signal(runs[0]!.runId, 'shipped', true);
      await client.signal(runs[2]!.runId, 'shipped', false);
      expect(await runs[0]!.result({ timeoutMs: 30_000 })).toBe('gold');
      expect(await runs[2]!.result({ timeoutMs: 30_000 })).toBe('basic');
      // 4 runs x 2 calls before the wait, and 1 after it for each of the two that resumed.
      expect(counted.writes()).toBe(10);

      // The client: list, count, describe.
      const gold = await client.runs.list({ attributes: { tier: 'gold' }, order: 'oldest' });
      expect(gold.runs.map((r) => r.runId).sort()).toEqual(
        [runs[0]!.runId, runs[1]!.runId, runs[3]!.runId].sort(),
      );
      expect((await client.describe(runs[0]!.runId)).attributes).toEqual({
        customerId: { type: 'keyword', value: 'c-11' },
        placedAt: { type: 'time', value: 1_764_000_000_000 },
        tier: { type: 'keyword', value: 'gold' },
        total: { type: 'number', value: 40 },
        shipped: { type: 'boolean', value: true },
      });
      expect(await client.runs.count({ attributes: { tier: 'gold' } })).toMatchObject({
        total: 3,
        byStatus: { completed: 1, suspended: 2 },
        byWorkflow: { attr_order: { completed: 1, suspended: 2 } },
      });
      const shippedOrNot = await client.runs.list({ attributes: { shipped: false } });
      expect(shippedOrNot.runs.map((r) => r.runId)).toEqual([runs[2]!.runId]);

      // The CLI: list by one attribute and a range, count, describe.
      const listed = await baton('runs', 'list', '--attr', 'tier=gold', '--attr', 'total>=40', '--json');
      expect(listed.code, listed.err).toBe(0);
      const listedIds = (JSON.parse(listed.out) as { runs: { runId: string }[] }).runs.map((r) => r.runId);
      expect(listedIds.sort()).toEqual([runs[0]!.runId, runs[1]!.runId, runs[3]!.runId].sort());
      const c11 = await baton('runs', 'list', '--attr', 'customerId=c-11', '--json');
      expect((JSON.parse(c11.out) as { runs: { runId: string }[] }).runs.map((r) => r.runId)).toEqual([
        runs[0]!.runId,
      ]);
      const count = await baton('runs', 'count', '--attr', 'tier=gold', '--json');
      expect(count.code, count.err).toBe(0);
      expect(JSON.parse(count.out)).toMatchObject({ total: 3, byStatus: { completed: 1, suspended: 2 } });
      const described = await baton('runs', 'describe', runs[2]!.runId, '--wide');
      expect(described.out).toMatch(/attribute customerId\s*│?\s*c-30 \(keyword\)/);
      expect(described.out).toMatch(/attribute placedAt\s*│?\s*2025-11-24T16:00:00.000Z \(time\)/);
      expect(described.out).toMatch(/attribute shipped\s*│?\s*false \(boolean\)/);

      // A bulk action on the same filter: a dry run counts, --yes cancels the gold runs still waiting.
      const dry = await baton('runs', 'cancel', '--attr', 'tier=gold', '--json');
      expect(JSON.parse(dry.out)).toEqual({ action: 'cancel', matched: 2, dryRun: true });
      const cancelled = await baton('runs', 'cancel', '--attr', 'tier=gold', '--yes', '--json');
      expect(cancelled.code, cancelled.err).toBe(0);
      for (const run of [runs[1]!, runs[3]!]) await until(run.runId, 'cancelled');
      expect((await client.runs.count({ attributes: { tier: 'gold' } })).byStatus).toMatchObject({
        completed: 1,
        cancelled: 2,
        suspended: 0,
      });
      // A bad expression is a usage error naming it.
      const bad = await baton('runs', 'list', '--attr', 'total:number=lots');
      expect(bad.code).toBe(2);
      expect(bad.err).toMatch(/--attr: attribute filter 'total:number=lots'/);
    },
  );
});
