/**
 * Store conformance, concurrency slots per key (contracts/concurrency.ts in @baton/core): at most
 * `limit` holders, a line served in arrival order before any newcomer, a holder that asks again
 * keeps its slot, finished holders forgotten, a run handed a slot gets a due timer when suspended,
 * and bad requests refused.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';
import { acquireOk, createTestRun, suspendedRun } from './helpers.js';

/** Registers the concurrency tests; `store()` is the test's fresh store. */
export function describeConcurrencyConformance(store: () => Store): void {
  describe('concurrency slots per key', () => {
    const request = (key: string, runId: string, limit = 2) => ({ key, runId, limit });

    it('gives at most limit slots, keeps a holder that asks again, and lines the rest up once', async () => {
      const key = uniqueId('key');
      const [a, b, c, d] = await Promise.all(
        [1, 2, 3, 4].map(async () => (await createTestRun(store())).runId),
      );
      expect(await store().concurrency.acquire(request(key, a!))).toEqual({ acquired: true, wake: [] });
      expect(await store().concurrency.acquire(request(key, b!))).toEqual({ acquired: true, wake: [] });
      expect(await store().concurrency.acquire(request(key, c!))).toEqual({ acquired: false, wake: [] });
      expect(await store().concurrency.acquire(request(key, d!))).toEqual({ acquired: false, wake: [] });
      // Asking again: a holder keeps its slot, a waiting run keeps its place (not lined up twice).
      expect(await store().concurrency.acquire(request(key, a!))).toEqual({ acquired: true, wake: [] });
      expect(await store().concurrency.acquire(request(key, c!))).toEqual({ acquired: false, wake: [] });
      const state = await store().concurrency.state(key);
      expect(state.holders.sort()).toEqual([a, b].sort());
      expect(state.waiting).toEqual([c, d]);
      // Another key is another set of slots.
      const other = uniqueId('key');
      expect(await store().concurrency.acquire(request(other, c!))).toEqual({ acquired: true, wake: [] });
    });

    it('serves the line in arrival order before any newcomer when a holder releases', async () => {
      const key = uniqueId('key');
      const [a, b, c, late] = await Promise.all(
        [1, 2, 3, 4].map(async () => (await createTestRun(store())).runId),
      );
      await store().concurrency.acquire(request(key, a!, 1));
      await store().concurrency.acquire(request(key, b!, 1));
      await store().concurrency.acquire(request(key, c!, 1));
      expect(await store().concurrency.release(request(key, a!, 1))).toEqual([b]);
      // b holds the freed slot before it asks: a newcomer waits behind c.
      expect(await store().concurrency.acquire(request(key, late!, 1))).toEqual({
        acquired: false,
        wake: [],
      });
      expect(await store().concurrency.acquire(request(key, b!, 1))).toEqual({ acquired: true, wake: [] });
      expect(await store().concurrency.state(key)).toEqual({ holders: [b], waiting: [c, late] });
      // A waiting run that gives up leaves the line; releasing what one does not hold frees nothing.
      expect(await store().concurrency.release(request(key, c!, 1))).toEqual([]);
      expect(await store().concurrency.release(request(key, a!, 1))).toEqual([]);
      expect(await store().concurrency.release(request(key, b!, 1))).toEqual([late]);
      expect(await store().concurrency.state(key)).toEqual({ holders: [late], waiting: [] });
      expect(await store().concurrency.release(request(key, late!, 1))).toEqual([]);
      expect(await store().concurrency.state(key)).toEqual({ holders: [], waiting: [] });
    });

    it('forgets a holder whose run finished, and skips a waiting run that finished', async () => {
      const key = uniqueId('key');
      const holder = await createTestRun(store());
      const epoch = await acquireOk(store(), holder.runId, 'worker-a');
      const waiting = await createTestRun(store());
      const waitingEpoch = await acquireOk(store(), waiting.runId, 'worker-a');
      const next = (await createTestRun(store())).runId;
      await store().concurrency.acquire(request(key, holder.runId, 1));
      await store().concurrency.acquire(request(key, waiting.runId, 1));
      await store().concurrency.acquire(request(key, next, 1));
      // The holder's worker recorded its end and died before releasing; the first waiting run was
      // cancelled while it waited.
      await store().runs.finish(holder.runId, epoch, { status: 'completed', result: 1 });
      await store().runs.finish(waiting.runId, waitingEpoch, {
        status: 'cancelled',
        error: { name: 'CancelledError', message: 'cancelled' },
      });
      const newcomer = (await createTestRun(store())).runId;
      expect(await store().concurrency.acquire(request(key, newcomer, 1))).toEqual({
        acquired: false,
        wake: [next],
      });
      expect(await store().concurrency.state(key)).toEqual({ holders: [next], waiting: [newcomer] });
    });

    it('skips a waiting run that was paused: it could not use the slot', async () => {
      const key = uniqueId('key');
      const holder = (await createTestRun(store())).runId;
      await store().concurrency.acquire(request(key, holder, 1));
      const paused = await suspendedRun(store(), { label: 'paused', wakeAt: null });
      await store().concurrency.acquire(request(key, paused.runId, 1));
      const next = (await createTestRun(store())).runId;
      await store().concurrency.acquire(request(key, next, 1));
      expect(await store().control.requestPause(paused.runId)).toEqual({ found: true, state: 'paused' });
      expect(await store().concurrency.release(request(key, holder, 1))).toEqual([next]);
      expect(await store().concurrency.state(key)).toEqual({ holders: [next], waiting: [] });
    });

    it('sets a due timer for a suspended run it hands a slot, so the timer scan wakes it', async () => {
      const key = uniqueId('key');
      const holder = (await createTestRun(store())).runId;
      await store().concurrency.acquire(request(key, holder, 1));
      // The waiting run parks: refused, then suspended waiting for nothing.
      const parked = await suspendedRun(store(), { label: 'parked', wakeAt: null });
      expect(await store().concurrency.acquire(request(key, parked.runId, 1))).toEqual({
        acquired: false,
        wake: [],
      });
      expect((await store().timers.claimDue(1000, 60_000)).map((t) => t.runId)).not.toContain(parked.runId);
      expect(await store().concurrency.release(request(key, holder, 1))).toEqual([parked.runId]);
      const due = await store().timers.claimDue(1000, 60_000);
      expect(due.map((t) => t.runId)).toContain(parked.runId);
      expect(await acquireOk(store(), parked.runId, 'worker-b')).toBe(parked.epoch + 1);
      expect(await store().concurrency.acquire(request(key, parked.runId, 1))).toEqual({
        acquired: true,
        wake: [],
      });
    });

    it('refuses an empty or overlong key and a limit that is not a positive integer', async () => {
      const { runId } = await createTestRun(store());
      await expect(store().concurrency.acquire({ key: '', runId, limit: 1 })).rejects.toThrow(
        /concurrency key/,
      );
      await expect(store().concurrency.acquire({ key: 'k'.repeat(257), runId, limit: 1 })).rejects.toThrow(
        /1-256/,
      );
      await expect(store().concurrency.acquire({ key: 'k', runId, limit: 0 })).rejects.toThrow(
        /positive integer/,
      );
      await expect(store().concurrency.release({ key: 'k', runId, limit: 1.5 })).rejects.toThrow(
        /positive integer/,
      );
    });
  });
}
