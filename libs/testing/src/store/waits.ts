/**
 * Store conformance, waiting runs: leases.suspend, the SignalInbox, control.requestCancel and the TimerStore.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { setTimeout as sleep } from 'node:timers/promises';
import { uniqueId } from '../conformance-helpers.js';
import { EXPIRY_WAIT_MS, FENCED, SHORT_TTL_MS, acquireOk, createTestRun, suspendedRun } from './helpers.js';

/** Registers the suspension, signal, cancel and timer tests; `store()` is the test's fresh store. */
export function describeWaitConformance(store: () => Store): void {
  describe('suspension', () => {
    it('suspends a run: no owner, no expiry, run suspended, acquirable at once with the next epoch', async () => {
      const { runId, epoch } = await suspendedRun(store(), { signals: ['approve'] });
      expect(await store().leases.get(runId)).toMatchObject({
        epoch,
        owner: null,
        state: 'suspended',
        expiresAt: null,
      });
      expect((await store().runs.get(runId))?.status).toBe('suspended');
      expect((await store().leases.renew([{ runId, epoch }], SHORT_TTL_MS))[0]?.ok).toBe(false);
      expect(await acquireOk(store(), runId, 'worker-b')).toBe(epoch + 1);
    });

    it('says what a suspended run waits for: its signal names and its timer; nothing once it runs again', async () => {
      const now = await store().leases.now();
      const wakeAt = now + 60_000;
      const { runId } = await suspendedRun(store(), { signals: ['approve', 'baton.promise'], wakeAt });
      expect((await store().leases.get(runId))?.waitingFor).toEqual({
        signals: ['approve', 'baton.promise'],
        wakeAt,
      });
      const sleeper = await suspendedRun(store(), { signals: [], wakeAt });
      expect((await store().leases.get(sleeper.runId))?.waitingFor).toEqual({ signals: [], wakeAt });
      const forever = await suspendedRun(store(), { signals: ['go'] });
      expect((await store().leases.get(forever.runId))?.waitingFor).toEqual({
        signals: ['go'],
        wakeAt: null,
      });
      await acquireOk(store(), runId, 'worker-b');
      expect((await store().leases.get(runId))?.waitingFor).toBeUndefined();
    });

    it('refuses to suspend under a stale epoch', async () => {
      const { runId } = await createTestRun(store());
      const stale = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      await sleep(EXPIRY_WAIT_MS);
      const current = await acquireOk(store(), runId, 'worker-b');
      const request = { runId, epoch: stale, wakeAt: null, signals: ['approve'], consumedSignalIds: [] };
      await expect(store().leases.suspend(request)).rejects.toMatchObject(FENCED);
      expect(await store().leases.get(runId)).toMatchObject({
        epoch: current,
        owner: 'worker-b',
        state: 'held',
      });
    });
  });

  describe('signals', () => {
    it('reports a signal that arrived before the wait as pending, unless already consumed', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      const signal = { signalId: uniqueId('sig'), name: 'approve', payload: { ok: true } };
      expect(await store().signals.deliver(runId, signal)).toEqual({ found: true, wake: false });
      const wait = { runId, epoch, wakeAt: null, signals: ['approve'], consumedSignalIds: [] };
      expect(await store().leases.suspend(wait)).toEqual({ ok: false, reason: 'signal-pending' });
      expect(await store().leases.get(runId)).toMatchObject({ epoch, owner: 'worker-a', state: 'held' });
      expect(await store().leases.suspend({ ...wait, consumedSignalIds: [signal.signalId] })).toEqual({
        ok: true,
      });
    });

    it('does not count a pending signal of another name', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      await store().signals.deliver(runId, { signalId: uniqueId('sig'), name: 'other', payload: null });
      const wait = { runId, epoch, wakeAt: null, signals: ['approve'], consumedSignalIds: [] };
      expect(await store().leases.suspend(wait)).toEqual({ ok: true });
    });

    it('wakes a run waiting for the signal: acquirable at once, timer gone', async () => {
      const now = await store().leases.now();
      const { runId, epoch } = await suspendedRun(store(), { signals: ['approve'], wakeAt: now - 1 });
      const signal = { signalId: uniqueId('sig'), name: 'approve', payload: 42 };
      expect(await store().signals.deliver(runId, signal)).toEqual({ found: true, wake: true });
      const lease = await store().leases.get(runId);
      expect(lease).toMatchObject({ epoch, owner: null, state: 'held' });
      expect(lease?.expiresAt).toBeLessThanOrEqual(await store().leases.now());
      expect(await store().timers.claimDue(10, 60_000)).toEqual([]);
      expect(await acquireOk(store(), runId, 'worker-b')).toBe(epoch + 1);
    });

    it('keeps a suspended run asleep for a signal it does not wait for', async () => {
      const { runId } = await suspendedRun(store(), { signals: ['approve'] });
      const signal = { signalId: uniqueId('sig'), name: 'other', payload: null };
      expect(await store().signals.deliver(runId, signal)).toEqual({ found: true, wake: false });
      expect((await store().leases.get(runId))?.state).toBe('suspended');
    });

    it('ignores a second delivery of the same signal id', async () => {
      const { runId } = await suspendedRun(store(), { signals: ['approve'] });
      const signalId = uniqueId('sig');
      expect(await store().signals.deliver(runId, { signalId, name: 'approve', payload: 1 })).toEqual({
        found: true,
        wake: true,
      });
      expect(await store().signals.deliver(runId, { signalId, name: 'approve', payload: 2 })).toEqual({
        found: true,
        wake: false,
      });
      const inbox = await store().signals.read(runId);
      expect(inbox).toEqual([{ signalId, name: 'approve', payload: 1, receivedAt: expect.any(Number) }]);
    });

    it('keeps the inbox in arrival order with payloads intact', async () => {
      const { runId } = await createTestRun(store());
      const ids = [uniqueId('a'), uniqueId('b'), uniqueId('c')];
      for (const [i, signalId] of ids.entries()) {
        await store().signals.deliver(runId, { signalId, name: `n${i}`, payload: { i, tags: ['x'] } });
      }
      const inbox = await store().signals.read(runId);
      expect(inbox.map((s) => s.signalId)).toEqual(ids);
      expect(inbox[2]).toMatchObject({ name: 'n2', payload: { i: 2, tags: ['x'] } });
      expect(await store().signals.read(uniqueId('empty'))).toEqual([]);
    });

    it('reports an unknown run as not found and keeps no inbox for it', async () => {
      const runId = uniqueId('unknown');
      const signal = { signalId: uniqueId('sig'), name: 'approve', payload: null };
      expect(await store().signals.deliver(runId, signal)).toEqual({ found: false, wake: false });
      expect(await store().signals.read(runId)).toEqual([]);
    });

    it('accepts signals for a claimed run that is not in the index', async () => {
      const runId = uniqueId('lease-only');
      await acquireOk(store(), runId, 'worker-a');
      const signal = { signalId: uniqueId('sig'), name: 'approve', payload: null };
      expect(await store().signals.deliver(runId, signal)).toEqual({ found: true, wake: false });
      expect(await store().signals.read(runId)).toHaveLength(1);
    });
  });

  describe('signals to a finished run', () => {
    it('drops a signal sent to a completed, failed or cancelled run, keeps nothing and says so', async () => {
      const outcomes = [
        { status: 'completed', result: 1 },
        { status: 'failed', error: { name: 'Error', message: 'boom' } },
        { status: 'cancelled', error: { name: 'CancelledError', message: 'stop' } },
      ] as const;
      for (const outcome of outcomes) {
        const { runId } = await createTestRun(store());
        const epoch = await acquireOk(store(), runId, 'worker-a');
        const before = { signalId: uniqueId('sig'), name: 'approve', payload: 'kept' };
        expect(await store().signals.deliver(runId, before)).toEqual({ found: true, wake: false });
        await store().runs.finish(runId, epoch, outcome);
        for (let i = 0; i < 3; i++) {
          const late = { signalId: uniqueId('late'), name: 'approve', payload: { i } };
          expect(await store().signals.deliver(runId, late)).toEqual({
            found: true,
            wake: false,
            dropped: true,
          });
        }
        // The same signal id again is dropped too, never stored.
        expect(await store().signals.deliver(runId, before)).toEqual({
          found: true,
          wake: false,
          dropped: true,
        });
        expect((await store().signals.read(runId)).map((s) => s.payload)).toEqual(['kept']);
        expect((await store().runs.get(runId))?.status).toBe(outcome.status);
      }
    });
  });

  describe('cancellation', () => {
    it("keeps the first cancel request's reason with the flag, and none when none was given", async () => {
      const { runId } = await createTestRun(store());
      await acquireOk(store(), runId, 'worker-a');
      expect(await store().control.requestCancel(runId, 'customer withdrew')).toEqual({
        found: true,
        wake: false,
      });
      expect(await store().control.requestCancel(runId, 'a later reason')).toEqual({
        found: true,
        wake: false,
      });
      expect(await store().leases.get(runId)).toMatchObject({
        cancelRequested: true,
        cancelReason: 'customer withdrew',
      });
      const silent = await createTestRun(store(), 'silent');
      await acquireOk(store(), silent.runId, 'worker-a');
      await store().control.requestCancel(silent.runId);
      const lease = await store().leases.get(silent.runId);
      expect(lease?.cancelRequested).toBe(true);
      expect(lease?.cancelReason).toBeUndefined();
    });

    it('wakes a suspended run on cancel and hands the flag to the next owner', async () => {
      const now = await store().leases.now();
      const { runId, epoch } = await suspendedRun(store(), { wakeAt: now - 1 });
      expect(await store().control.requestCancel(runId)).toEqual({ found: true, wake: true });
      expect(await store().leases.get(runId)).toMatchObject({
        state: 'held',
        owner: null,
        cancelRequested: true,
      });
      expect(await store().timers.claimDue(10, 60_000)).toEqual([]);
      expect(await store().leases.acquire(runId, 'worker-b', SHORT_TTL_MS)).toEqual({
        ok: true,
        epoch: epoch + 1,
        cancelRequested: true,
      });
    });

    it('flags a held run without waking it; renewals and suspension see the flag', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      expect(await store().control.requestCancel(runId)).toEqual({ found: true, wake: false });
      expect(await store().leases.get(runId)).toMatchObject({ owner: 'worker-a', cancelRequested: true });
      expect(await store().leases.renew([{ runId, epoch }], SHORT_TTL_MS)).toEqual([
        { runId, ok: true, cancelRequested: true },
      ]);
      const wait = { runId, epoch, wakeAt: null, signals: ['approve'], consumedSignalIds: [] };
      expect(await store().leases.suspend(wait)).toEqual({ ok: false, reason: 'cancel-requested' });
    });

    it('remembers a cancel requested before any worker claimed the run', async () => {
      const { runId } = await createTestRun(store());
      expect(await store().control.requestCancel(runId)).toEqual({ found: true, wake: false });
      expect(await store().leases.acquire(runId, 'worker-a', SHORT_TTL_MS)).toEqual({
        ok: true,
        epoch: 1,
        cancelRequested: true,
      });
    });

    it('reports an unknown run as not found', async () => {
      expect(await store().control.requestCancel(uniqueId('unknown'))).toEqual({ found: false, wake: false });
    });

    it('answers a cancel of a finished run as too late and keeps no flag', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      await store().runs.finish(runId, epoch, { status: 'completed', result: 1 });
      expect(await store().control.requestCancel(runId, 'late')).toEqual({
        found: true,
        wake: false,
        tooLate: true,
      });
      expect(await store().leases.get(runId)).toMatchObject({ state: 'finished', cancelRequested: false });
    });
  });

  describe('the cancel window before a run ends (closeCancels)', () => {
    it('closes cancels for the epoch: a later request is too late and sets nothing', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      expect(await store().control.closeCancels(runId, epoch)).toEqual({ cancelRequested: false });
      expect(await store().control.requestCancel(runId, 'too late')).toEqual({
        found: true,
        wake: false,
        tooLate: true,
      });
      expect(await store().leases.get(runId)).toMatchObject({ cancelRequested: false });
      expect(await store().leases.renew([{ runId, epoch }], SHORT_TTL_MS)).toEqual([
        { runId, ok: true, cancelRequested: false },
      ]);
    });

    it('answers a cancel requested before the close, with its reason, and closes nothing', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      await store().control.requestCancel(runId, 'customer withdrew');
      const answer = { cancelRequested: true, cancelReason: 'customer withdrew' };
      expect(await store().control.closeCancels(runId, epoch)).toEqual(answer);
      expect(await store().control.closeCancels(runId, epoch)).toEqual(answer);
      const silent = await createTestRun(store(), 'silent');
      const silentEpoch = await acquireOk(store(), silent.runId, 'worker-a');
      await store().control.requestCancel(silent.runId);
      expect(await store().control.closeCancels(silent.runId, silentEpoch)).toEqual({
        cancelRequested: true,
      });
    });

    it('lasts for its epoch only: the next owner accepts cancels again', async () => {
      const { runId } = await createTestRun(store());
      const first = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      expect(await store().control.closeCancels(runId, first)).toEqual({ cancelRequested: false });
      await sleep(EXPIRY_WAIT_MS);
      const second = await acquireOk(store(), runId, 'worker-b');
      expect(second).toBe(first + 1);
      expect(await store().control.requestCancel(runId, 'after the failover')).toEqual({
        found: true,
        wake: false,
      });
      expect(await store().control.closeCancels(runId, second)).toEqual({
        cancelRequested: true,
        cancelReason: 'after the failover',
      });
    });

    it('is fenced under a stale epoch, for a lease not held, and for an unknown run', async () => {
      const { runId } = await createTestRun(store());
      const first = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      await sleep(EXPIRY_WAIT_MS);
      const second = await acquireOk(store(), runId, 'worker-b');
      await expect(store().control.closeCancels(runId, first)).rejects.toMatchObject(FENCED);
      const { runId: waiting, epoch } = await suspendedRun(store(), { signals: ['approve'] });
      await expect(store().control.closeCancels(waiting, epoch)).rejects.toMatchObject(FENCED);
      await expect(store().control.closeCancels(uniqueId('unknown'), 1)).rejects.toMatchObject(FENCED);
      expect(await store().control.closeCancels(runId, second)).toEqual({ cancelRequested: false });
    });
  });

  describe('telling the owner of an accepted cancel (watchCancels, optional)', () => {
    it('tells the owner the run id at once, and no other worker', async (ctx) => {
      const s = store();
      if (s.control.watchCancels === undefined) {
        ctx.skip(`${s.name} store has no watchCancels (optional): owners see cancels at their renewal`);
        return;
      }
      const owner = uniqueId('owner');
      const other = uniqueId('other');
      if (s.presence !== undefined) for (const worker of [owner, other]) await s.presence.register(worker);
      const toOwner: string[] = [];
      const toOther: string[] = [];
      const stops = [
        s.control.watchCancels(owner, (id) => toOwner.push(id)),
        s.control.watchCancels(other, (id) => toOther.push(id)),
      ];
      try {
        const held = await createTestRun(s, 'held');
        await acquireOk(s, held.runId, owner);
        const elsewhere = await createTestRun(s, 'elsewhere');
        await acquireOk(s, elsewhere.runId, uniqueId('third'));
        // A subscription is set up in the background: ask again until the owner is told (each
        // accepted request of a held run tells its owner), within a bound.
        const deadline = Date.now() + 10_000;
        while (!toOwner.includes(held.runId) && Date.now() < deadline) {
          expect(await s.control.requestCancel(held.runId)).toEqual({ found: true, wake: false });
          await s.control.requestCancel(elsewhere.runId);
          await sleep(100);
        }
        expect(toOwner).toContain(held.runId);
        expect(toOwner).not.toContain(elsewhere.runId);
        expect(toOther).toEqual([]);
      } finally {
        for (const stop of stops) stop();
        if (s.presence !== undefined)
          for (const worker of [owner, other]) await s.presence.unregister(worker);
      }
    });
  });

  describe('timers', () => {
    it('returns due timers earliest first, never one not yet due', async () => {
      const now = await store().leases.now();
      const late = await suspendedRun(store(), { wakeAt: now - 10, label: 'late' });
      const earliest = await suspendedRun(store(), { wakeAt: now - 30, label: 'earliest' });
      const middle = await suspendedRun(store(), { wakeAt: now - 20, label: 'middle' });
      await suspendedRun(store(), { wakeAt: now + 60_000, label: 'future' });
      await suspendedRun(store(), { wakeAt: null, label: 'no-timer' });
      expect(await store().timers.claimDue(10, 60_000)).toEqual([
        { runId: earliest.runId, dueAt: now - 30 },
        { runId: middle.runId, dueAt: now - 20 },
        { runId: late.runId, dueAt: now - 10 },
      ]);
    });

    it('claims at most `limit` timers and pushes each claimed one into the future', async () => {
      const now = await store().leases.now();
      const first = await suspendedRun(store(), { wakeAt: now - 20 });
      const second = await suspendedRun(store(), { wakeAt: now - 10 });
      expect((await store().timers.claimDue(1, 60_000)).map((t) => t.runId)).toEqual([first.runId]);
      expect((await store().timers.claimDue(10, 60_000)).map((t) => t.runId)).toEqual([second.runId]);
      expect(await store().timers.claimDue(10, 60_000)).toEqual([]);
    });

    it('returns a claimed timer again after redeliverAfterMs, in case its wake was lost', async () => {
      const now = await store().leases.now();
      const { runId } = await suspendedRun(store(), { wakeAt: now - 1 });
      expect((await store().timers.claimDue(10, SHORT_TTL_MS)).map((t) => t.runId)).toEqual([runId]);
      expect(await store().timers.claimDue(10, SHORT_TTL_MS)).toEqual([]);
      await sleep(EXPIRY_WAIT_MS);
      expect((await store().timers.claimDue(10, SHORT_TTL_MS)).map((t) => t.runId)).toEqual([runId]);
    });

    it('fires a timer that comes due while the run sleeps', async () => {
      const now = await store().leases.now();
      const { runId } = await suspendedRun(store(), { wakeAt: now + SHORT_TTL_MS });
      expect(await store().timers.claimDue(10, 60_000)).toEqual([]);
      await sleep(EXPIRY_WAIT_MS);
      expect(await store().timers.claimDue(10, 60_000)).toEqual([{ runId, dueAt: now + SHORT_TTL_MS }]);
    });

    it('removes the timer when the run is claimed', async () => {
      const now = await store().leases.now();
      const { runId } = await suspendedRun(store(), { wakeAt: now - 1 });
      await acquireOk(store(), runId, 'worker-b');
      expect(await store().timers.claimDue(10, 60_000)).toEqual([]);
    });
  });
}
