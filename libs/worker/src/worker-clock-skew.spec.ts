/**
 * A worker whose clock is 30 s off the store's (memory adapters; the real stores are in
 * tests/system/src/clock-skew.int.spec.ts): the timers it journals are on the store's clock, so a
 * sleep or a signal timeout ends when the store's clock passes its due time, once, with one
 * suspension and one wake, and ctx.now() records the store's time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow, SignalTimeoutError } from '@baton/core';
import type { JournalEntry } from '@baton/core/runtime';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';
import { silentLogger } from './logger.js';

const WAIT_MS = 2_500;
/** Far below the 30 s skew, far above any round trip to the memory store. */
const TOLERANCE_MS = 1_000;

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

function scenario(readStoreClock: () => Promise<number>) {
  const storeTime = defineActivity({ name: 'store-time', run: () => readStoreClock() });
  const sleeper = defineWorkflow({
    name: 'skew-sleeper',
    version: 1,
    run: async (ctx) => {
      const recordedNow = ctx.now();
      await ctx.sleep(WAIT_MS);
      return { recordedNow, after: await ctx.run(storeTime, null) };
    },
  });
  const waiter = defineWorkflow({
    name: 'skew-waiter',
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
  return { sleeper, waiter };
}

function deadlineOf(entries: JournalEntry[], type: 'TimerScheduled' | 'SignalWaitStarted'): number {
  const entry = entries.find((e) => e.type === type);
  if (entry?.type === 'TimerScheduled') return entry.wakeAt;
  if (entry?.type === 'SignalWaitStarted' && entry.timeoutAt !== null) return entry.timeoutAt;
  throw new Error(`no ${type} with a deadline in the journal`);
}

describe.each([
  { name: '30 s ahead', skewMs: 30_000 },
  { name: '30 s behind', skewMs: -30_000 },
])('a worker whose clock is $name of the store', ({ skewMs }) => {
  it('journals store-clock deadlines, and each wait ends once, not before its due time', async () => {
    const storeClock = { read: (): Promise<number> => Promise.reject(new Error('no fleet yet')) };
    const { sleeper, waiter } = scenario(() => storeClock.read());
    const f = fleet({ workflows: [sleeper, waiter] });
    storeClock.read = () => f.store.leases.now();
    current = f;
    const warnings: Array<{ obj: object; msg?: string }> = [];
    const logger = { ...silentLogger, warn: (obj: object, msg?: string) => warnings.push({ obj, msg }) };
    const w = await f.spawn({ clock: () => Date.now() + skewMs, inProcessWaitMs: 1_000, logger });
    const offset = w.worker.health().storeClockOffsetMs!;
    expect(Math.abs(offset + skewMs)).toBeLessThan(TOLERANCE_MS);
    // Named at start: how far, and which way.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.obj).toMatchObject({ storeClockOffsetMs: Math.round(offset) });
    expect(warnings[0]?.msg).toMatch(
      skewMs > 0 ? /\d+ ms ahead of the store's/ : /\d+ ms behind the store's/,
    );

    const storeBefore = await f.store.leases.now();
    const slept = await f.client.start(sleeper, null);
    const waited = await f.client.start(waiter, null);
    await until(
      async () =>
        (await f.store.runs.get(slept.runId))?.status === 'suspended' &&
        (await f.store.runs.get(waited.runId))?.status === 'suspended',
      5_000,
      'both runs to suspend',
    );
    const storeSuspended = await f.store.leases.now();

    const sleptResult = (await slept.result({ timeoutMs: WAIT_MS + 10_000 })) as {
      recordedNow: number;
      after: number;
    };
    const waitedResult = (await waited.result({ timeoutMs: WAIT_MS + 10_000 })) as {
      timedOut: boolean;
      after: number;
    };
    const sleptJournal = (await f.client.history(slept.runId)).map((p) => p.entry);
    const waitedJournal = (await f.client.history(waited.runId)).map((p) => p.entry);

    const wakeAt = deadlineOf(sleptJournal, 'TimerScheduled');
    const timeoutAt = deadlineOf(waitedJournal, 'SignalWaitStarted');
    for (const due of [wakeAt, timeoutAt]) {
      expect(due - WAIT_MS).toBeGreaterThanOrEqual(storeBefore - TOLERANCE_MS);
      expect(due - WAIT_MS).toBeLessThanOrEqual(storeSuspended + TOLERANCE_MS);
    }
    // ctx.now() recorded the store's time too: the same clock as the timer it preceded.
    expect(sleptResult.recordedNow).toBeGreaterThanOrEqual(storeBefore - TOLERANCE_MS);
    expect(sleptResult.recordedNow).toBeLessThanOrEqual(wakeAt - WAIT_MS);
    // Not ended before the due time, on the store's clock.
    expect(sleptResult.after).toBeGreaterThanOrEqual(wakeAt);
    expect(waitedResult).toMatchObject({ timedOut: true });
    expect(waitedResult.after).toBeGreaterThanOrEqual(timeoutAt);
    // Claimed at the start and once more by the timer: no wake-and-suspend churn.
    for (const runId of [slept.runId, waited.runId]) {
      const claims = w.events.filter((e) => e.type === 'run-claimed' && e.runId === runId);
      expect(claims.map((e) => (e.type === 'run-claimed' ? e.via : ''))).toEqual(['start', 'wake']);
      expect(w.events.filter((e) => e.type === 'run-suspended' && e.runId === runId)).toHaveLength(1);
    }
  }, 30_000);
});
