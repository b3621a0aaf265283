/**
 * Store conformance, updates (contracts/updates.ts in @baton/core): requests kept once per update
 * id in arrival order until the owner settles them; a settled id's outcome kept and answered to a
 * repeat, the first settle winning; only the lease's holder settles; a suspended run woken, a held
 * or paused one left to its owner; a finished run keeping nothing new; all of it deleted with the
 * run; bad ids refused.
 */
import { describe, expect, it } from 'vitest';
import type { Store, UpdateOutcome } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';
import { acquireOk, createTestRun, FENCED, suspendedRun } from './helpers.js';

/** Registers the update tests; `store()` is the test's fresh store. */
export function describeUpdateConformance(store: () => Store): void {
  describe('updates', () => {
    const request = (runId: string, updateId: string, args: unknown = { n: 1 }, name = 'add_item') =>
      store().updates.request(runId, { updateId, name, args });
    const completed = (result: unknown): UpdateOutcome => ({ status: 'completed', result });

    it('keeps requests in arrival order, once per update id, until they are settled', async () => {
      const { runId } = await createTestRun(store(), 'updates');
      const epoch = await acquireOk(store(), runId, 'worker-a');
      expect(await request(runId, 'u1', { sku: 'A' })).toEqual({ found: true, wake: false });
      expect(await request(runId, 'u2', { sku: 'B' }, 'remove_item')).toEqual({ found: true, wake: false });
      // A repeat of a pending id changes nothing, whatever it carries.
      expect(await request(runId, 'u1', { sku: 'changed' })).toEqual({ found: true, wake: false });
      const pending = await store().updates.pending(runId);
      expect(pending.map(({ updateId, name, args }) => ({ updateId, name, args }))).toEqual([
        { updateId: 'u1', name: 'add_item', args: { sku: 'A' } },
        { updateId: 'u2', name: 'remove_item', args: { sku: 'B' } },
      ]);
      expect(pending.every((r) => Number.isFinite(r.requestedAt) && r.requestedAt > 0)).toBe(true);

      const kept = await store().updates.settle(runId, epoch, {
        updateId: 'u1',
        name: 'add_item',
        outcome: completed({ total: 20 }),
      });
      expect(kept).toMatchObject({ updateId: 'u1', name: 'add_item', outcome: completed({ total: 20 }) });
      expect(kept.settledAt).toBeGreaterThan(0);
      expect((await store().updates.pending(runId)).map((r) => r.updateId)).toEqual(['u2']);
      expect(await store().updates.outcome(runId, 'u1')).toEqual(kept);
      expect(await store().updates.outcome(runId, 'u2')).toBeUndefined();
      expect(await store().updates.outcome(runId, 'never-sent')).toBeUndefined();
      // A repeat of a settled id is answered with the kept outcome and listed nowhere again.
      expect(await request(runId, 'u1', { sku: 'again' })).toEqual({ found: true, wake: false, kept });
      expect((await store().updates.pending(runId)).map((r) => r.updateId)).toEqual(['u2']);
    });

    it('lets the first settle of an id win, and answers it to every later one', async () => {
      const { runId } = await createTestRun(store(), 'updates');
      const epoch = await acquireOk(store(), runId, 'worker-a');
      await request(runId, 'u1');
      const error = {
        name: 'UpdateRejectedError',
        message: 'qty must be at least 1',
        code: 'BATON_UPDATE_REJECTED',
      };
      const first = await store().updates.settle(runId, epoch, {
        updateId: 'u1',
        name: 'add_item',
        outcome: { status: 'rejected', error },
      });
      const second = await store().updates.settle(runId, epoch, {
        updateId: 'u1',
        name: 'add_item',
        outcome: completed('other'),
      });
      expect(second).toEqual(first);
      expect((await store().updates.outcome(runId, 'u1'))?.outcome).toEqual({ status: 'rejected', error });
      // An id settled without being requested here first (an owner answering what it read) is kept too.
      const direct = await store().updates.settle(runId, epoch, {
        updateId: 'u9',
        name: 'x',
        outcome: completed(9),
      });
      expect(await store().updates.outcome(runId, 'u9')).toEqual(direct);
    });

    it('keeps arguments and outcomes exactly as given', async () => {
      const { runId } = await createTestRun(store(), 'updates');
      const epoch = await acquireOk(store(), runId, 'worker-a');
      const value = {
        big: 9007199254740991,
        small: 1e-7,
        negative: -0.5,
        text: 'ünï|cødé "quoted" \\ \u2028',
        nested: { list: [1, [2, { three: null }]], flag: false },
      };
      await request(runId, 'exact', value);
      expect((await store().updates.pending(runId))[0]?.args).toEqual(value);
      await store().updates.settle(runId, epoch, {
        updateId: 'exact',
        name: 'add_item',
        outcome: completed(value),
      });
      expect((await store().updates.outcome(runId, 'exact'))?.outcome).toEqual(completed(value));
      await request(runId, 'nothing', null);
      expect((await store().updates.pending(runId))[0]?.args).toBeNull();
    });

    it('lets only the holder of the current lease settle', async () => {
      const { runId } = await createTestRun(store(), 'updates');
      const first = await acquireOk(store(), runId, 'worker-a', 200);
      await request(runId, 'u1');
      const outcome = completed(1);
      await expect(
        store().updates.settle(runId, first + 1, { updateId: 'u1', name: 'add_item', outcome }),
      ).rejects.toMatchObject(FENCED);
      await new Promise((resolve) => setTimeout(resolve, 350));
      const second = await acquireOk(store(), runId, 'worker-b');
      await expect(
        store().updates.settle(runId, first, { updateId: 'u1', name: 'add_item', outcome }),
      ).rejects.toMatchObject(FENCED);
      expect((await store().updates.pending(runId)).map((r) => r.updateId)).toEqual(['u1']);
      await store().updates.settle(runId, second, { updateId: 'u1', name: 'add_item', outcome });
      expect(await store().updates.pending(runId)).toEqual([]);
      // A suspended run has no holder.
      const suspended = await suspendedRun(store(), { signals: ['go'] });
      await expect(
        store().updates.settle(suspended.runId, suspended.epoch, { updateId: 'u', name: 'x', outcome }),
      ).rejects.toMatchObject(FENCED);
    });

    it('wakes a suspended run, and leaves a held or paused one to its owner', async () => {
      const suspended = await suspendedRun(store(), { wakeAt: Date.now() + 3_600_000 });
      expect(await request(suspended.runId, 'u1')).toEqual({ found: true, wake: true });
      // Acquirable at once, its timer gone.
      const woken = await store().leases.acquire(suspended.runId, 'worker-b', 30_000);
      expect(woken).toMatchObject({ ok: true, epoch: suspended.epoch + 1 });
      expect((await store().updates.pending(suspended.runId)).map((r) => r.updateId)).toEqual(['u1']);

      const { runId: held } = await createTestRun(store(), 'updates');
      await acquireOk(store(), held, 'worker-a');
      expect(await request(held, 'u1')).toEqual({ found: true, wake: false });
      expect(await store().leases.acquire(held, 'worker-b', 30_000)).toMatchObject({
        ok: false,
        reason: 'held',
      });

      const paused = await suspendedRun(store(), { signals: ['go'] });
      expect(await store().control.requestPause(paused.runId)).toEqual({ found: true, state: 'paused' });
      expect(await request(paused.runId, 'u1')).toEqual({ found: true, wake: false });
      expect(await store().leases.acquire(paused.runId, 'worker-b', 30_000)).toMatchObject({
        ok: false,
        reason: 'paused',
      });
      // Kept for after the resume.
      expect(await store().control.resume(paused.runId)).toMatchObject({ resumed: true, wake: true });
      expect((await store().updates.pending(paused.runId)).map((r) => r.updateId)).toEqual(['u1']);
    });

    it('keeps nothing for a finished run, but answers an id it settled before the end', async () => {
      const { runId } = await createTestRun(store(), 'updates');
      const epoch = await acquireOk(store(), runId, 'worker-a');
      await request(runId, 'before');
      const kept = await store().updates.settle(runId, epoch, {
        updateId: 'before',
        name: 'add_item',
        outcome: completed('ok'),
      });
      await store().runs.finish(runId, epoch, { status: 'completed', result: 1 });
      expect(await request(runId, 'after')).toEqual({ found: true, wake: false, finished: true });
      expect(await store().updates.pending(runId)).toEqual([]);
      expect(await request(runId, 'before')).toEqual({ found: true, wake: false, kept });
    });

    it('does not know a run without its record', async () => {
      expect(await request(uniqueId('never-created'), 'u1')).toEqual({ found: false, wake: false });
    });

    it('tells which of many runs have pending requests, in one call', async () => {
      const runs = await Promise.all([1, 2, 3].map(() => createTestRun(store(), 'updates')));
      const [a, b, c] = runs.map((r) => r.runId) as [string, string, string];
      const epochA = await acquireOk(store(), a, 'worker-a');
      await request(a, 'u1');
      await request(b, 'u1');
      expect((await store().updates.waiting([a, b, c, uniqueId('unknown')])).sort()).toEqual([a, b].sort());
      await store().updates.settle(a, epochA, { updateId: 'u1', name: 'add_item', outcome: completed(1) });
      expect(await store().updates.waiting([a, b, c, b])).toEqual([b]);
      expect(await store().updates.waiting([])).toEqual([]);
    });

    it('keeps one request of an id sent by many callers at once', async () => {
      const { runId } = await createTestRun(store(), 'updates');
      await acquireOk(store(), runId, 'worker-a');
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => request(runId, 'same', { i })));
      expect(answers.every((a) => a.found && !a.wake)).toBe(true);
      expect((await store().updates.pending(runId)).map((r) => r.updateId)).toEqual(['same']);
    });

    it("deletes a run's updates with the run", async () => {
      const { runId } = await createTestRun(store(), 'updates');
      const epoch = await acquireOk(store(), runId, 'worker-a');
      await request(runId, 'pending-one');
      await request(runId, 'settled-one');
      await store().updates.settle(runId, epoch, {
        updateId: 'settled-one',
        name: 'add_item',
        outcome: completed(1),
      });
      await store().runs.finish(runId, epoch, { status: 'completed', result: 1 });
      expect(await store().retention.delete(runId)).toBe(true);
      expect(await store().updates.outcome(runId, 'settled-one')).toBeUndefined();
      expect(await store().updates.pending(runId)).toEqual([]);
      expect(await store().updates.waiting([runId])).toEqual([]);
      expect(await request(runId, 'settled-one')).toEqual({ found: false, wake: false });
    });

    it('refuses an update id or name no store should keep, naming it', async () => {
      const { runId } = await createTestRun(store(), 'updates');
      await expect(request(runId, '')).rejects.toThrow(/update id "" must be a string of 1-256 characters/);
      await expect(request(runId, 'x'.repeat(257))).rejects.toThrow(/must be a string of 1-256 characters/);
      await expect(request(runId, 'a\nb')).rejects.toThrow(/must not hold control characters/);
      await expect(request(runId, 'ok', null, '')).rejects.toThrow(
        /update name "" is not a non-empty string/,
      );
      await expect(store().updates.outcome(runId, '')).rejects.toThrow(/update id ""/);
      await expect(
        store().updates.settle(runId, 1, { updateId: '', name: 'x', outcome: completed(1) }),
      ).rejects.toThrow(/update id ""/);
      expect(await store().updates.pending(runId)).toEqual([]);
    });
  });
}
