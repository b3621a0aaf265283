/**
 * Store conformance, pause and resume: control.requestPause, control.pauseHeld, control.resume, and what a paused
 * run means to acquire, renewal, suspension, the reapers, timers, signals and cancels.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { setTimeout as sleep } from 'node:timers/promises';
import { uniqueId } from '../conformance-helpers.js';
import {
  EXPIRY_WAIT_MS,
  FENCED,
  LONG_TTL_MS,
  SHORT_TTL_MS,
  acquireOk,
  checkpointOf,
  createTestRun,
  suspendedRun,
} from './helpers.js';

/** Registers the pause tests; `store()` is the test's fresh store. */
export function describePauseConformance(store: () => Store): void {
  describe('pause and resume', () => {
    it('pauses a suspended run at once: no timer claims it, nothing acquires it; resume makes it acquirable', async () => {
      const { runId, epoch } = await suspendedRun(store(), { wakeAt: (await store().leases.now()) - 1000 });
      expect(await store().control.requestPause(runId, 'maintenance window')).toEqual({
        found: true,
        state: 'paused',
      });
      expect(await store().leases.get(runId)).toMatchObject({
        epoch: epoch + 1,
        owner: null,
        state: 'paused',
        expiresAt: null,
        pauseReason: 'maintenance window',
      });
      expect((await store().runs.get(runId))?.status).toBe('paused');
      const due = await store().timers.claimDue(1000, 60_000);
      expect(due.map((t) => t.runId)).not.toContain(runId);
      expect(await store().leases.acquire(runId, 'worker-b', SHORT_TTL_MS)).toEqual({
        ok: false,
        reason: 'paused',
      });
      // A second request changes nothing.
      expect(await store().control.requestPause(runId, 'another reason')).toEqual({
        found: true,
        state: 'paused',
      });
      expect((await store().leases.get(runId))?.pauseReason).toBe('maintenance window');

      expect(await store().control.resume(runId)).toEqual({ found: true, resumed: true, wake: true });
      const resumed = await store().leases.get(runId);
      expect(resumed).toMatchObject({ epoch: epoch + 1, owner: null, state: 'held' });
      expect(resumed?.pauseReason).toBeUndefined();
      expect((await store().runs.get(runId))?.status).toBe('pending');
      expect(await acquireOk(store(), runId, 'worker-b')).toBe(epoch + 2);
      expect((await store().runs.get(runId))?.status).toBe('running');
      // Resuming a run that is not paused changes nothing.
      expect(await store().control.resume(runId)).toEqual({ found: true, resumed: false, wake: false });
    });

    it('pauses a pending run nobody claimed yet; after the resume its first claim has epoch 1', async () => {
      const { runId } = await createTestRun(store());
      expect(await store().control.requestPause(runId)).toEqual({ found: true, state: 'paused' });
      expect((await store().runs.get(runId))?.status).toBe('paused');
      expect(await store().leases.acquire(runId, 'worker-a', SHORT_TTL_MS)).toEqual({
        ok: false,
        reason: 'paused',
      });
      expect(await store().control.resume(runId)).toEqual({ found: true, resumed: true, wake: true });
      expect(await acquireOk(store(), runId, 'worker-a')).toBe(1);
    });

    it('asks a live owner to pause: renewals and getLease report it; the owner pauses under its epoch, fencing itself', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      expect(await store().control.requestPause(runId, 'look at it')).toEqual({
        found: true,
        state: 'pause-requested',
      });
      expect(await store().leases.get(runId)).toMatchObject({
        epoch,
        owner: 'worker-a',
        state: 'held',
        pauseRequested: true,
        pauseReason: 'look at it',
      });
      expect((await store().runs.get(runId))?.status).toBe('running');
      expect(await store().leases.renew([{ runId, epoch }], SHORT_TTL_MS * 100)).toEqual([
        { runId, ok: true, cancelRequested: false, pauseRequested: true },
      ]);
      expect(await store().control.requestPause(runId)).toEqual({ found: true, state: 'pause-requested' });

      await expect(store().control.pauseHeld(runId, epoch + 1)).rejects.toMatchObject(FENCED);
      expect(await store().control.pauseHeld(runId, epoch)).toEqual({ ok: true });
      const paused = await store().leases.get(runId);
      expect(paused).toMatchObject({ epoch: epoch + 1, owner: null, state: 'paused', expiresAt: null });
      expect(paused?.pauseRequested).toBeUndefined();
      expect((await store().runs.get(runId))?.status).toBe('paused');
      // The pause moved the lease to the next epoch: the former owner's renewal is refused, and its
      // late writes (a second pause, a checkpoint, a finish) are fenced.
      expect((await store().leases.renew([{ runId, epoch }], SHORT_TTL_MS))[0]).toMatchObject({ ok: false });
      await expect(store().control.pauseHeld(runId, epoch)).rejects.toMatchObject(FENCED);
      await expect(store().checkpoints.write(checkpointOf(runId, epoch, 1))).rejects.toMatchObject(FENCED);
      await expect(
        store().runs.finish(runId, epoch, { status: 'completed', result: 0 }),
      ).rejects.toMatchObject(FENCED);
      expect((await store().leases.get(runId))?.state).toBe('paused');
      expect((await store().runs.get(runId))?.status).toBe('paused');
      expect(await store().control.resume(runId)).toEqual({ found: true, resumed: true, wake: true });
      expect(await acquireOk(store(), runId, 'worker-b')).toBe(epoch + 2);
    });

    it('pauses, instead of handing on, a run whose owner died before it stopped for its pause', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      expect(await store().control.requestPause(runId)).toEqual({ found: true, state: 'pause-requested' });
      await sleep(EXPIRY_WAIT_MS);
      // The reaper hands it to nobody as it does any expired lease ...
      expect(await store().leases.reapExpired(1000, 60_000)).toContain(runId);
      // ... and the claim that follows finds it paused, not free.
      expect(await store().leases.acquire(runId, 'worker-b', SHORT_TTL_MS)).toEqual({
        ok: false,
        reason: 'paused',
      });
      expect(await store().leases.get(runId)).toMatchObject({
        epoch: epoch + 1,
        owner: null,
        state: 'paused',
      });
      expect((await store().runs.get(runId))?.status).toBe('paused');
      await sleep(EXPIRY_WAIT_MS);
      expect(await store().leases.reapExpired(1000, 60_000)).not.toContain(runId);
      expect(await store().leases.acquire(runId, 'worker-c', SHORT_TTL_MS)).toEqual({
        ok: false,
        reason: 'paused',
      });
    });

    it('pauses a handed-off run at once, and a run reaching its suspension with a pause pending', async () => {
      const { runId: handedOff } = await createTestRun(store());
      const first = await acquireOk(store(), handedOff, 'worker-a');
      expect(await store().leases.release(handedOff, first)).toBe(true);
      expect(await store().control.requestPause(handedOff)).toEqual({ found: true, state: 'paused' });
      expect((await store().leases.get(handedOff))?.state).toBe('paused');

      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      expect(await store().control.requestPause(runId)).toEqual({ found: true, state: 'pause-requested' });
      const wait = {
        runId,
        epoch,
        wakeAt: (await store().leases.now()) - 1000,
        signals: [],
        consumedSignalIds: [],
      };
      expect(await store().leases.suspend(wait)).toEqual({ ok: true, paused: true });
      expect(await store().leases.get(runId)).toMatchObject({
        epoch: epoch + 1,
        state: 'paused',
        owner: null,
      });
      expect((await store().runs.get(runId))?.status).toBe('paused');
      expect((await store().timers.claimDue(1000, 60_000)).map((t) => t.runId)).not.toContain(runId);
    });

    it('withdraws a pause request on resume: the owner renews on without it', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      await store().control.requestPause(runId, 'oops');
      expect(await store().control.resume(runId)).toEqual({ found: true, resumed: true, wake: false });
      const lease = await store().leases.get(runId);
      expect(lease).toMatchObject({ epoch, owner: 'worker-a', state: 'held' });
      expect(lease?.pauseRequested).toBeUndefined();
      expect(lease?.pauseReason).toBeUndefined();
      expect(await store().leases.renew([{ runId, epoch }], SHORT_TTL_MS * 100)).toEqual([
        { runId, ok: true, cancelRequested: false },
      ]);
      // The owner may have stopped for the request before it was withdrawn: its pause is refused.
      expect(await store().control.pauseHeld(runId, epoch)).toEqual({ ok: false, reason: 'not-requested' });
      expect(await store().leases.get(runId)).toMatchObject({ epoch, owner: 'worker-a', state: 'held' });
    });

    it('keeps a signal sent to a paused run without waking it', async () => {
      const { runId } = await suspendedRun(store(), { signals: ['approve'] });
      await store().control.requestPause(runId);
      const signal = { signalId: uniqueId('sig'), name: 'approve', payload: 1 };
      expect(await store().signals.deliver(runId, signal)).toEqual({ found: true, wake: false });
      expect((await store().leases.get(runId))?.state).toBe('paused');
      expect((await store().signals.read(runId)).map((s) => s.signalId)).toEqual([signal.signalId]);
    });

    it('lets a cancel win: a paused run becomes acquirable, a pause request is withdrawn, a pause is refused', async () => {
      const { runId, epoch } = await suspendedRun(store());
      await store().control.requestPause(runId);
      expect(await store().control.requestCancel(runId, 'no longer needed')).toEqual({
        found: true,
        wake: true,
      });
      expect(await store().leases.get(runId)).toMatchObject({
        state: 'held',
        owner: null,
        cancelRequested: true,
      });
      expect(await store().leases.acquire(runId, 'worker-b', SHORT_TTL_MS)).toEqual({
        ok: true,
        epoch: epoch + 2,
        cancelRequested: true,
      });
      expect(await store().control.requestPause(runId)).toEqual({ found: true, state: 'cancel-requested' });

      const { runId: held } = await createTestRun(store());
      const heldEpoch = await acquireOk(store(), held, 'worker-a');
      await store().control.requestPause(held);
      await store().control.requestCancel(held);
      expect((await store().leases.get(held))?.pauseRequested).toBeUndefined();
      expect(await store().control.pauseHeld(held, heldEpoch)).toEqual({
        ok: false,
        reason: 'cancel-requested',
      });
      expect((await store().leases.get(held))?.state).toBe('held');
    });

    it('orders a pause and a first claim that race: the claim runs and is asked to pause, or finds it paused', async () => {
      const runs = await Promise.all(Array.from({ length: 10 }, () => createTestRun(store(), 'race')));
      const answers = await Promise.all(
        runs.map(({ runId }) =>
          Promise.all([
            store().leases.acquire(runId, 'worker-a', LONG_TTL_MS),
            store().control.requestPause(runId),
          ]),
        ),
      );
      for (const [i, [claim, pause]] of answers.entries()) {
        const lease = await store().leases.get(runs[i]!.runId);
        if (claim.ok) {
          expect(pause).toEqual({ found: true, state: 'pause-requested' });
          expect(lease).toMatchObject({ state: 'held', owner: 'worker-a', pauseRequested: true });
        } else {
          expect(claim).toEqual({ ok: false, reason: 'paused' });
          expect(pause).toEqual({ found: true, state: 'paused' });
          expect(lease).toMatchObject({ state: 'paused', owner: null });
        }
      }
    });

    it('forgets a pause request of a run that finished before it stopped for it', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      expect(await store().control.requestPause(runId, 'too late')).toEqual({
        found: true,
        state: 'pause-requested',
      });
      await store().runs.finish(runId, epoch, { status: 'completed', result: 2 });
      const lease = await store().leases.get(runId);
      expect(lease?.state).toBe('finished');
      expect(lease?.pauseRequested).toBeUndefined();
      expect(lease?.pauseReason).toBeUndefined();
      expect(await store().control.resume(runId)).toEqual({ found: true, resumed: false, wake: false });
      expect(await store().control.requestPause(runId)).toEqual({ found: true, state: 'finished' });
    });

    it('refuses a finished run and answers not found for an unknown one; lists and counts paused runs', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      await store().runs.finish(runId, epoch, { status: 'completed', result: 1 });
      expect(await store().control.requestPause(runId)).toEqual({ found: true, state: 'finished' });
      expect((await store().leases.get(runId))?.state).toBe('finished');
      expect(await store().control.resume(runId)).toEqual({ found: true, resumed: false, wake: false });
      const unknown = uniqueId('unknown');
      expect(await store().control.requestPause(unknown)).toEqual({ found: false });
      expect(await store().control.resume(unknown)).toEqual({ found: false, resumed: false, wake: false });
      await expect(store().control.pauseHeld(unknown, 1)).rejects.toMatchObject(FENCED);

      const workflow = uniqueId('paused-wf');
      const { run } = await store().runs.create({
        runId: uniqueId('listed'),
        workflow,
        version: 1,
        input: null,
        idempotencyKey: null,
      });
      await store().control.requestPause(run.runId);
      const page = await store().runs.list({ workflow, status: ['paused'] });
      expect(page.runs.map((r) => r.runId)).toEqual([run.runId]);
      const counts = await store().runs.count();
      expect(counts.byWorkflow[workflow]).toEqual({ paused: 1 });
      expect(counts.byStatus.paused).toBeGreaterThanOrEqual(1);
      await store().control.resume(run.runId);
      expect((await store().runs.count()).byWorkflow[workflow]).toEqual({ pending: 1 });
    });
  });
}
