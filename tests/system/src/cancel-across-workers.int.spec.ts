/**
 * A cancel reaches the run's owner at once, whichever worker or client takes it, on every bus
 * (docs/operations.md, "When a cancel is accepted"). Two workers on a real bus and store, with a
 * lease of 60 s, so the lease renewal (a fraction of that) cannot be what delivers a cancel within
 * the 10 s these tests wait: only the store telling the owner (RunControlStore.watchCancels) can.
 *
 * - Each run's activity waits on its AbortSignal; every cancel must abort it and end the run
 *   `cancelled`. Cancels come from a producer with only the bus (its message taken by either
 *   worker, the owner or not) and from a client with the store (recorded there directly). The
 *   latencies from `client.cancel()` to the activity's abort are printed (p50, max): measured,
 *   not asserted.
 * - A cancel sent during a run's last step, whose activity ignores the abort and returns, ends the
 *   run `cancelled`, not `completed`: the cancel was accepted before the run journaled its end.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import { until } from '../../../libs/worker/src/fleet.spec-helper.js';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import { inProcessNamespace, startInProcessWorkers } from './in-process.spec-helper.js';

/** One pair per bus, each store under two of them. */
const PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats') },
  { name: 'kafka+postgres', factory: crashEnvironment('postgres', 'kafka') },
  { name: 'redis+redis', factory: crashEnvironment('redis', 'redis') },
];

/** What each run's activity saw, by the label its input carries. */
const seen = new Map<string, { startedAt: number; abortedAt?: number }>();

/** Waits on its AbortSignal (at most 20 s, then returns). */
const hold = defineActivity({
  name: 'xcancel_hold',
  timeoutMs: 30_000,
  run: (label: string, io) => {
    const entry: { startedAt: number; abortedAt?: number } = { startedAt: performance.now() };
    seen.set(label, entry);
    return new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('released'), 20_000);
      io.signal.addEventListener(
        'abort',
        () => {
          entry.abortedAt = performance.now();
          clearTimeout(timer);
          resolve('aborted');
        },
        { once: true },
      );
    });
  },
});

/** Ignores the abort: returns after 400 ms whatever happens. */
const finishAnyway = defineActivity({
  name: 'xcancel_finish_anyway',
  timeoutMs: 30_000,
  run: async (label: string) => {
    seen.set(label, { startedAt: performance.now() });
    await new Promise((resolve) => setTimeout(resolve, 400));
    return 'finished';
  },
});

const holding = defineWorkflow({
  name: 'xcancel_holding',
  version: 1,
  run: async (ctx, label: string) => ctx.run(hold, label),
});

const lastStep = defineWorkflow({
  name: 'xcancel_last_step',
  version: 1,
  run: async (ctx, label: string) => {
    await ctx.activity('first', async () => 1);
    return ctx.run(finishAnyway, label);
  },
});

const WORKFLOWS = [holding, lastStep];

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

for (const pair of PAIRS) {
  describe(`a cancel across two workers on ${pair.name}`, () => {
    const ns = inProcessNamespace(pair.factory, 'xcancel');

    it(
      'aborts the in-flight activity and ends the run cancelled, from either kind of client',
      { timeout: 90_000 },
      async () => {
        await startInProcessWorkers(ns, { workflows: WORKFLOWS, leaseMs: 60_000 });
        const busOnly = new Client({ transport: ns.transport });
        const latencies: Record<'bus' | 'store', number[]> = { bus: [], store: [] };
        for (let i = 0; i < 12; i++) {
          const via = i % 2 === 0 ? 'bus' : 'store';
          const client = via === 'bus' ? busOnly : ns.client;
          const label = `${pair.name}-${via}-${i}-${Date.now()}`;
          const run = await ns.client.start(holding, label);
          await until(() => seen.has(label), 10_000, `run ${run.runId}'s activity to start`);
          const sentAt = performance.now();
          await client.cancel(run.runId, `cancel ${i}`);
          await until(
            () => seen.get(label)?.abortedAt !== undefined,
            10_000,
            `the activity of run ${run.runId} to be aborted`,
          );
          latencies[via].push(seen.get(label)!.abortedAt! - sentAt);
          await expect(run.result({ timeoutMs: 10_000 })).rejects.toMatchObject({
            name: 'CancelledError',
            reason: `cancel ${i}`,
          });
          expect((await ns.client.describe(run.runId)).status).toBe('cancelled');
        }
        for (const via of ['bus', 'store'] as const) {
          const ms = latencies[via];
          console.log(
            `cancel -> activity aborted, two workers on ${pair.name}, client with ${via === 'bus' ? 'the bus only' : 'the store'}: ` +
              `p50 ${percentile(ms, 50).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms (${ms.length} cancels)`,
          );
        }
      },
    );

    it(
      'ends a run cancelled when the cancel comes during its last step, whose activity returns anyway',
      { timeout: 90_000 },
      async () => {
        await startInProcessWorkers(ns, { workflows: WORKFLOWS, leaseMs: 60_000 });
        const busOnly = new Client({ transport: ns.transport });
        const runs = await Promise.all(
          Array.from({ length: 10 }, async (_, i) => {
            const label = `${pair.name}-last-${i}-${Date.now()}`;
            return { label, run: await ns.client.start(lastStep, label) };
          }),
        );
        await Promise.all(
          runs.map(async ({ label, run }) => {
            await until(() => seen.has(label), 10_000, `run ${run.runId}'s last step to start`);
            await busOnly.cancel(run.runId, 'changed my mind');
          }),
        );
        for (const { run } of runs) {
          await expect(run.result({ timeoutMs: 10_000 })).rejects.toMatchObject({ name: 'CancelledError' });
        }
      },
    );
  });
}
