/**
 * Store conformance, LeaseStore section (`store.leases`): acquire, renew, release (hand-off), reaping, get, now.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { setTimeout as sleep } from 'node:timers/promises';
import { uniqueId } from '../conformance-helpers.js';
import { EXPIRY_WAIT_MS, LONG_TTL_MS, SHORT_TTL_MS, acquireOk, createTestRun } from './helpers.js';

/** Registers the lease tests; `store()` is the current test's fresh store. */
export function describeLeaseConformance(store: () => Store): void {
  describe('leases', () => {
    it('acquires an absent lease with epoch 1 and reports it held by the owner until expiry', async () => {
      const runId = uniqueId('run');
      const before = await store().leases.now();
      const result = await store().leases.acquire(runId, 'worker-a', LONG_TTL_MS);
      expect(result).toEqual({ ok: true, epoch: 1, cancelRequested: false });
      const lease = await store().leases.get(runId);
      expect(lease).toMatchObject({
        runId,
        epoch: 1,
        owner: 'worker-a',
        state: 'held',
        cancelRequested: false,
      });
      expect(lease?.expiresAt).toBeGreaterThan(before);
    });

    it('refuses a live lease to another worker, naming the holder and its expiry', async () => {
      const runId = uniqueId('run');
      await acquireOk(store(), runId, 'worker-a');
      const lease = await store().leases.get(runId);
      const result = await store().leases.acquire(runId, 'worker-b', LONG_TTL_MS);
      expect(result).toEqual({ ok: false, reason: 'held', owner: 'worker-a', expiresAt: lease?.expiresAt });
      expect(await store().leases.get(runId)).toMatchObject({ epoch: 1, owner: 'worker-a' });
    });

    it('gives a lease to exactly one of two workers acquiring it at once', async () => {
      const runId = uniqueId('run');
      const results = await Promise.all([
        store().leases.acquire(runId, 'worker-a', LONG_TTL_MS),
        store().leases.acquire(runId, 'worker-b', LONG_TTL_MS),
      ]);
      const winners = results.filter((r) => r.ok);
      const losers = results.filter((r) => !r.ok);
      expect(winners).toEqual([{ ok: true, epoch: 1, cancelRequested: false }]);
      const winner = results[0]?.ok ? 'worker-a' : 'worker-b';
      expect(losers).toEqual([expect.objectContaining({ ok: false, reason: 'held', owner: winner })]);
      expect(await store().leases.get(runId)).toMatchObject({ epoch: 1, owner: winner });
    });

    it('lets another worker take an expired lease with the next epoch', async () => {
      const runId = uniqueId('run');
      expect(await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS)).toBe(1);
      await sleep(EXPIRY_WAIT_MS);
      expect(await acquireOk(store(), runId, 'worker-b')).toBe(2);
      expect(await store().leases.get(runId)).toMatchObject({ epoch: 2, owner: 'worker-b', state: 'held' });
    });

    it('marks an indexed run running and counts each claim as an attempt', async () => {
      const { runId } = await createTestRun(store());
      await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      expect(await store().runs.get(runId)).toMatchObject({ status: 'running', attempts: 1 });
      await sleep(EXPIRY_WAIT_MS);
      await acquireOk(store(), runId, 'worker-b');
      expect(await store().runs.get(runId)).toMatchObject({ status: 'running', attempts: 2 });
    });

    it('renews a live lease so it outlives its first expiry', async () => {
      const runId = uniqueId('run');
      const epoch = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      const first = (await store().leases.get(runId))?.expiresAt ?? 0;
      expect(await store().leases.renew([{ runId, epoch }], LONG_TTL_MS)).toEqual([
        { runId, ok: true, cancelRequested: false },
      ]);
      expect((await store().leases.get(runId))?.expiresAt).toBeGreaterThan(first);
      await sleep(EXPIRY_WAIT_MS);
      expect(await store().leases.acquire(runId, 'worker-b', LONG_TTL_MS)).toMatchObject({
        ok: false,
        reason: 'held',
        owner: 'worker-a',
      });
    });

    it('refuses to renew a lease that already expired', async () => {
      const runId = uniqueId('run');
      const epoch = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      await sleep(EXPIRY_WAIT_MS);
      const [result] = await store().leases.renew([{ runId, epoch }], LONG_TTL_MS);
      expect(result).toMatchObject({ runId, ok: false });
      expect(await acquireOk(store(), runId, 'worker-b')).toBe(epoch + 1);
    });

    it('refuses to renew under a stale epoch and keeps the new owner', async () => {
      const runId = uniqueId('run');
      const stale = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      await sleep(EXPIRY_WAIT_MS);
      const current = await acquireOk(store(), runId, 'worker-b');
      const results = await store().leases.renew(
        [
          { runId, epoch: stale },
          { runId, epoch: current },
        ],
        LONG_TTL_MS,
      );
      expect(results.map((r) => r.ok)).toEqual([false, true]);
      expect(await store().leases.get(runId)).toMatchObject({ epoch: current, owner: 'worker-b' });
    });

    it('renews a batch in request order, failing unknown runs only', async () => {
      const a = uniqueId('run-a');
      const b = uniqueId('run-b');
      const unknown = uniqueId('unknown');
      const epochA = await acquireOk(store(), a, 'worker-a');
      const epochB = await acquireOk(store(), b, 'worker-a');
      const results = await store().leases.renew(
        [
          { runId: a, epoch: epochA },
          { runId: unknown, epoch: 1 },
          { runId: b, epoch: epochB },
        ],
        LONG_TTL_MS,
      );
      expect(results).toEqual([
        { runId: a, ok: true, cancelRequested: false },
        { runId: unknown, ok: false, cancelRequested: false },
        { runId: b, ok: true, cancelRequested: false },
      ]);
      expect(await store().leases.renew([], LONG_TTL_MS)).toEqual([]);
    });

    it('hands a released lease off so any worker can acquire it at once', async () => {
      const runId = uniqueId('run');
      const epoch = await acquireOk(store(), runId, 'worker-a');
      expect(await store().leases.release(runId, epoch)).toBe(true);
      const lease = await store().leases.get(runId);
      expect(lease).toMatchObject({ epoch, owner: null, state: 'held' });
      expect(lease?.expiresAt).toBeLessThanOrEqual(await store().leases.now());
      expect((await store().leases.renew([{ runId, epoch }], LONG_TTL_MS))[0]?.ok).toBe(false);
      expect(await acquireOk(store(), runId, 'worker-b')).toBe(epoch + 1);
    });

    it('ignores a release under a stale epoch', async () => {
      const runId = uniqueId('run');
      const stale = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      await sleep(EXPIRY_WAIT_MS);
      const current = await acquireOk(store(), runId, 'worker-b');
      expect(await store().leases.release(runId, stale)).toBe(false);
      expect(await store().leases.get(runId)).toMatchObject({
        epoch: current,
        owner: 'worker-b',
        state: 'held',
      });
      expect(await store().leases.release(uniqueId('unknown'), 1)).toBe(false);
    });

    it('reaps an expired lease once per reclaim period and never a live one', async () => {
      const live = uniqueId('live');
      const dead = uniqueId('dead');
      await acquireOk(store(), live, 'worker-a');
      await acquireOk(store(), dead, 'worker-b', SHORT_TTL_MS);
      expect(await store().leases.reapExpired(10, 400)).toEqual([]);
      await sleep(EXPIRY_WAIT_MS);
      expect(await store().leases.reapExpired(10, 400)).toEqual([dead]);
      expect(await store().leases.get(dead)).toMatchObject({ owner: null, state: 'held', epoch: 1 });
      expect(await store().leases.reapExpired(10, 400)).toEqual([]);
      await sleep(550);
      expect(await store().leases.reapExpired(10, 400)).toEqual([dead]);
      expect(await store().leases.get(live)).toMatchObject({ owner: 'worker-a', epoch: 1 });
    });

    it('reaps the oldest expiries first, at most `limit` per call', async () => {
      const first = uniqueId('first');
      const second = uniqueId('second');
      await acquireOk(store(), first, 'worker-a', 100);
      await acquireOk(store(), second, 'worker-a', SHORT_TTL_MS);
      await sleep(EXPIRY_WAIT_MS);
      expect(await store().leases.reapExpired(1, LONG_TTL_MS)).toEqual([first]);
      expect(await store().leases.reapExpired(10, LONG_TTL_MS)).toEqual([second]);
    });

    it('lets a worker acquire a reaped lease at once, fencing the old owner', async () => {
      const runId = uniqueId('run');
      const stale = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      await sleep(EXPIRY_WAIT_MS);
      expect(await store().leases.reapExpired(10, LONG_TTL_MS)).toEqual([runId]);
      expect((await store().leases.renew([{ runId, epoch: stale }], LONG_TTL_MS))[0]?.ok).toBe(false);
      // The reaper moved the expiry on only to report the run once per period; nobody owns it.
      expect(await acquireOk(store(), runId, 'worker-b')).toBe(stale + 1);
      const raced = await store().leases.acquire(runId, 'worker-c', LONG_TTL_MS);
      expect(raced).toMatchObject({ ok: false, reason: 'held', owner: 'worker-b' });
    });

    it('reaps a handed-off lease, in case the hand-off message was lost', async () => {
      const runId = uniqueId('run');
      const epoch = await acquireOk(store(), runId, 'worker-a');
      await store().leases.release(runId, epoch);
      expect(await store().leases.reapExpired(10, LONG_TTL_MS)).toEqual([runId]);
    });

    it('reports no lease for a run never claimed, and a steady clock', async () => {
      expect(await store().leases.get(uniqueId('unknown'))).toBeUndefined();
      const a = await store().leases.now();
      const b = await store().leases.now();
      expect(Number.isFinite(a)).toBe(true);
      expect(b).toBeGreaterThanOrEqual(a);
    });
  });
}
