/**
 * A worker whose clock is 30 s ahead of or behind the store's, on real Redis and real Postgres
 * (NATS as the bus), skewed through the Worker's `clock` option, never the machine's clock: a
 * 5 s sleep and a 5 s signal timeout end once the store's clock passes their due time, and not
 * before, with one suspension and one wake each (not 30 s late, not a wake-and-suspend churn);
 * the deadlines journaled and ctx.now() are on the store's clock.
 */
import { describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow, SignalTimeoutError } from '@baton/core';
import type { Store } from '@baton/core/adapter';
import type { JournalEntry } from '@baton/core/runtime';
import { Worker, type WorkerEvent } from '@baton/worker';
import { inProcessNamespace, IN_PROCESS_PAIRS } from './in-process.spec-helper.js';

const WAIT_MS = 5_000;
/** Far below the 30 s skew, far above a round trip to a loaded local server. */
const TOLERANCE_MS = 1_000;

/** The store the activity reads its time from, set per namespace. */
let storeOfTest: Store | undefined;

const storeTime = defineActivity({ name: 'skew_store_time', run: () => storeOfTest!.leases.now() });

const sleeper = defineWorkflow({
  name: 'skew_sleeper',
  version: 1,
  run: async (ctx) => {
    const recordedNow = ctx.now();
    await ctx.sleep(WAIT_MS);
    return { recordedNow, after: await ctx.run(storeTime, null) };
  },
});

const waiter = defineWorkflow({
  name: 'skew_waiter',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx.waitForSignal('never-sent', { timeout: WAIT_MS });
      return { timedOut: false, after: 0 };
    } catch (err) {
      if (!(err instanceof SignalTimeoutError)) throw err;
      return { timedOut: true, after: await ctx.run(storeTime, null) };
    }
  },
});

function deadlineOf(entries: JournalEntry[]): number {
  for (const entry of entries) {
    if (entry.type === 'TimerScheduled') return entry.wakeAt;
    if (entry.type === 'SignalWaitStarted' && entry.timeoutAt !== null) return entry.timeoutAt;
  }
  throw new Error('no timer or signal deadline in the journal');
}

const PAIRS = IN_PROCESS_PAIRS.filter((pair) => pair.name.startsWith('nats+'));

describe.each(PAIRS)('timers of a skewed worker on $name', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'skew');

  it.each([
    { skew: 'ahead', skewMs: 30_000 },
    { skew: 'behind', skewMs: -30_000 },
  ])(
    '30 s $skew: a sleep and a signal timeout end on the store clock, claimed twice each',
    async ({ skewMs }) => {
      const { store, client } = ns;
      storeOfTest = store;
      const events: WorkerEvent[] = [];
      const worker = new Worker({
        transport: ns.transport,
        store,
        workflows: [sleeper, waiter],
        leaseMs: 3_000,
        reapIntervalMs: 100,
        fetchWaitMs: 200,
        drainTimeoutMs: 2_000,
        clock: () => Date.now() + skewMs,
        onEvent: (event) => events.push(event),
      });
      await worker.start();
      ns.workers.push(worker);
      expect(Math.abs(worker.health().storeClockOffsetMs! + skewMs)).toBeLessThan(TOLERANCE_MS);

      const storeBefore = await store.leases.now();
      const slept = await client.start(sleeper, null);
      const waited = await client.start(waiter, null);
      // Generous: a worker 30 s ahead used to sleep 35 s.
      const sleptResult = (await slept.result({ timeoutMs: WAIT_MS + 20_000 })) as {
        recordedNow: number;
        after: number;
      };
      const waitedResult = (await waited.result({ timeoutMs: WAIT_MS + 20_000 })) as {
        timedOut: boolean;
        after: number;
      };
      const wakeAt = deadlineOf((await client.history(slept.runId)).map((p) => p.entry));
      const timeoutAt = deadlineOf((await client.history(waited.runId)).map((p) => p.entry));

      for (const due of [wakeAt, timeoutAt]) {
        // Set when the wait began, on the store's clock: after the start, and not 30 s off.
        expect(due - WAIT_MS).toBeGreaterThanOrEqual(storeBefore - TOLERANCE_MS);
        expect(due - WAIT_MS).toBeLessThanOrEqual(storeBefore + 10_000);
      }
      expect(sleptResult.recordedNow).toBeGreaterThanOrEqual(storeBefore - TOLERANCE_MS);
      expect(sleptResult.recordedNow).toBeLessThanOrEqual(wakeAt - WAIT_MS);
      // Neither ended before its due time on the store's clock.
      expect(sleptResult.after).toBeGreaterThanOrEqual(wakeAt);
      expect(waitedResult.timedOut).toBe(true);
      expect(waitedResult.after).toBeGreaterThanOrEqual(timeoutAt);
      for (const runId of [slept.runId, waited.runId]) {
        const claims = events.flatMap((e) => (e.type === 'run-claimed' && e.runId === runId ? [e.via] : []));
        expect(claims).toEqual(['start', 'wake']);
        expect(events.filter((e) => e.type === 'run-suspended' && e.runId === runId)).toHaveLength(1);
      }
    },
    60_000,
  );
});
