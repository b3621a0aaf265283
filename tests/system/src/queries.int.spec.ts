/**
 * Queries through the client on real buses and stores (docs/queries.md): two in-process workers on
 * NATS + Redis and on Kafka + Postgres. A held run is answered from its holder's memory, and the
 * answer follows the run as it advances; a run suspended on a signal, and a finished one, are
 * answered by a replay that runs and writes nothing; a handler that calls ctx.run is refused and
 * the run goes on untouched; an unknown name is refused with the names the run registers.
 *
 * The query `replaying` answers `ctx.isReplaying`: false from a live run's memory, true from a
 * replay (its executor never leaves replay), so each test knows which path answered.
 */
import { describe, expect, it } from 'vitest';
import { defineActivity, defineQuery, defineSignal, defineWorkflow } from '@baton/core';
import { QueryFailedError, UnknownQueryError } from '@baton/client';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { inProcessNamespace, startInProcessWorkers, until } from './in-process.spec-helper.js';

const PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats') },
  { name: 'kafka+postgres', factory: crashEnvironment('postgres', 'kafka') },
];

const status = defineQuery<{ stage: string; items: string[] }>('status');
const itemAt = defineQuery<string | null, number>('itemAt');
const replaying = defineQuery<boolean>('replaying');
const sneaky = defineQuery<number>('sneaky');
const proceed = defineSignal<string>('proceed');

/** Gates of the runs' second step, by label: a test opens one to let its run go on. */
const gates = new Map<string, () => void>();
/** Executions of every step, by label: a query that ran an activity would add one. */
const executions = new Map<string, number>();

const add = defineActivity({
  name: 'xquery_add',
  run: async (input: { label: string; item: string; gated: boolean }) => {
    executions.set(input.label, (executions.get(input.label) ?? 0) + 1);
    if (input.gated) await new Promise<void>((resolve) => gates.set(input.label, resolve));
    return input.item;
  },
});

/** Adds an item, a second one behind a gate, waits for `proceed` and adds its payload. */
const basket = defineWorkflow({
  name: 'xquery_basket',
  version: 1,
  run: async (ctx, label: string) => {
    let stage = 'filling';
    const items: string[] = [];
    ctx.onQuery(status, () => ({ stage, items }));
    ctx.onQuery(itemAt, (index) => items[index] ?? null);
    ctx.onQuery(replaying, () => ctx.isReplaying);
    ctx.onQuery(sneaky, () => {
      void ctx.run(add, { label, item: 'from a query', gated: false });
      return items.length;
    });
    items.push(await ctx.run(add, { label, item: 'apple', gated: false }));
    items.push(await ctx.run(add, { label, item: 'pear', gated: true }));
    stage = 'waiting';
    items.push(await ctx.waitForSignal(proceed));
    stage = 'done';
    return items;
  },
});

for (const pair of PAIRS) {
  describe(`queries on ${pair.name}`, () => {
    const ns = inProcessNamespace(pair.factory, 'xquery');

    it(
      'answers a held run from memory as it advances, then the suspended and the finished run by replay',
      { timeout: 90_000 },
      async () => {
        await startInProcessWorkers(ns, { workflows: [basket] });
        const label = `${pair.name}-life-${Date.now()}`;
        const run = await ns.client.start(basket, label);
        await until(() => gates.has(label), `run ${run.runId}'s second step to start`);

        // Held: its worker answers from memory, the first item in, the second under way.
        expect(await run.query(status)).toEqual({ stage: 'filling', items: ['apple'] });
        expect(await run.query(replaying)).toBe(false);
        gates.get(label)!();

        // Suspended on its signal: nobody holds it; a worker replays it.
        await until(
          async () => (await ns.client.describe(run.runId)).status === 'suspended',
          `run ${run.runId} to suspend`,
        );
        const journal = (await ns.client.history(run.runId)).length;
        expect(await run.query(status)).toEqual({ stage: 'waiting', items: ['apple', 'pear'] });
        expect(await run.query(itemAt, 1)).toBe('pear');
        expect(await run.query(replaying)).toBe(true);
        expect((await ns.client.history(run.runId)).length).toBe(journal);
        expect((await ns.client.describe(run.runId)).status).toBe('suspended');

        // Finished: replayed to its end.
        await ns.client.signal(run.runId, proceed, 'plum');
        expect(await run.result({ timeoutMs: 20_000 })).toEqual(['apple', 'pear', 'plum']);
        expect(await run.query(status)).toEqual({ stage: 'done', items: ['apple', 'pear', 'plum'] });
        expect(await run.query(replaying)).toBe(true);
        expect(await ns.client.queryNames(run.runId)).toEqual(['itemAt', 'replaying', 'sneaky', 'status']);
        // Every answer read; no step ran twice, none ran for a query.
        expect(executions.get(label)).toBe(2);
      },
    );

    it(
      'refuses a handler that calls ctx.run and an unknown name, held or not, and the run goes on untouched',
      { timeout: 90_000 },
      async () => {
        await startInProcessWorkers(ns, { workflows: [basket] });
        const label = `${pair.name}-refusals-${Date.now()}`;
        const run = await ns.client.start(basket, label);
        await until(() => gates.has(label), `run ${run.runId}'s second step to start`);
        for (const when of ['held', 'suspended']) {
          const refused = await run.query(sneaky).catch((err: unknown) => err);
          expect(refused, when).toBeInstanceOf(QueryFailedError);
          expect((refused as QueryFailedError).failure.name).toBe('QueryReadOnlyError');
          expect((refused as Error).message).toContain("query 'sneaky' called ctx.run");
          const unknown = await ns.client.query(run.runId, 'stauts').catch((err: unknown) => err);
          expect(unknown, when).toBeInstanceOf(UnknownQueryError);
          expect((unknown as UnknownQueryError).registered).toEqual([
            'itemAt',
            'replaying',
            'sneaky',
            'status',
          ]);
          if (when === 'held') {
            gates.get(label)!();
            await until(
              async () => (await ns.client.describe(run.runId)).status === 'suspended',
              `run ${run.runId} to suspend`,
            );
          }
        }
        await ns.client.signal(run.runId, proceed, 'fig');
        expect(await run.result({ timeoutMs: 20_000 })).toEqual(['apple', 'pear', 'fig']);
        expect(executions.get(label)).toBe(2);
        const steps = (await ns.client.history(run.runId))
          .map((p) => p.entry)
          .filter((e) => e.type === 'ActivityCompleted');
        expect(steps).toHaveLength(2);
      },
    );
  });
}
