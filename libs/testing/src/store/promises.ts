/**
 * Store conformance, durable promises (`store.promises`, contracts/promises.ts in @baton/core):
 * records by token, completed once, the completion delivered to the run's inbox in the same step
 * (so a suspension never misses it and a suspended run wakes), expired at the deadline unless
 * completed first, and deleted with their run.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';
import { acquireOk, checkpointOf, createTestRun, suspendedRun } from './helpers.js';

/** The inbox name and id of a completion (core's author/promise.ts, invariant 4). */
const PROMISE_SIGNAL = 'baton.promise';
const signalIdOf = (seq: number): string => `${PROMISE_SIGNAL}:${seq}`;

/** A fresh token, in the shape core draws (`bp_` and 32 base64url characters). */
function newToken(): string {
  return `bp_${uniqueId('t')
    .replace(/[^A-Za-z0-9_-]/g, '')
    .padEnd(32, 'x')
    .slice(-32)}`;
}

/** A payload as a client hands it over: what Lua or a JSON column could round (numbers) included. */
function deliveryOf(token: string, value: unknown) {
  return { token, outcome: 'resolved', value };
}

/** A claimed run with a pending promise made at step `seq`. */
async function runWithPromise(
  store: Store,
  options: { seq?: number; timeoutAt?: number | null; schema?: Record<string, unknown> } = {},
): Promise<{ runId: string; epoch: number; token: string; seq: number }> {
  const { runId } = await createTestRun(store, 'promising');
  const epoch = await acquireOk(store, runId, 'worker-a');
  const token = newToken();
  const seq = options.seq ?? 2;
  await store.promises.create({
    token,
    runId,
    seq,
    timeoutAt: options.timeoutAt ?? null,
    ...(options.schema !== undefined && { schema: options.schema }),
  });
  return { runId, epoch, token, seq };
}

/** Registers the durable promise tests; `store()` is the test's fresh store. */
export function describePromiseConformance(store: () => Store): void {
  describe('durable promises', () => {
    it('records a pending promise by its token and lists a run’s promises by step; a second create changes nothing', async () => {
      const before = await store().leases.now();
      const schema = {
        type: 'object',
        required: ['approved'],
        properties: { approved: { type: 'boolean' } },
      };
      const { runId, token } = await runWithPromise(store(), { seq: 4, timeoutAt: before + 60_000, schema });
      const record = await store().promises.get(token);
      expect(record).toEqual({
        token,
        runId,
        seq: 4,
        state: 'pending',
        schema,
        timeoutAt: before + 60_000,
        createdAt: expect.any(Number),
      });
      expect(record!.createdAt).toBeGreaterThanOrEqual(before);
      const second = newToken();
      await store().promises.create({ token: second, runId, seq: 1, timeoutAt: null });
      await store().promises.create({ token, runId, seq: 9, timeoutAt: null });
      expect(await store().promises.get(token)).toEqual(record);
      expect((await store().promises.forRun(runId)).map((p) => [p.seq, p.token])).toEqual([
        [1, second],
        [4, token],
      ]);
      expect(await store().promises.get(newToken())).toBeUndefined();
      expect(await store().promises.forRun(uniqueId('none'))).toEqual([]);
    });

    it('completes once: the payload kept exactly and put in the run’s inbox; a second completion changes nothing', async () => {
      const { runId, token, seq } = await runWithPromise(store());
      const value = { approved: true, total: 0.30000000000000004, big: 9007199254740991, note: 'naïve ✓' };
      const payload = deliveryOf(token, value);
      expect(await store().promises.complete(token, { outcome: 'resolved', payload })).toEqual({
        found: true,
        completed: true,
        runId,
        wake: false,
      });
      const record = await store().promises.get(token);
      expect(record).toMatchObject({ state: 'resolved', payload, completedAt: expect.any(Number) });
      expect(await store().signals.read(runId)).toEqual([
        { signalId: signalIdOf(seq), name: PROMISE_SIGNAL, payload, receivedAt: expect.any(Number) },
      ]);
      const again = await store().promises.complete(token, {
        outcome: 'rejected',
        payload: { token, outcome: 'rejected', error: { name: 'Error', message: 'no' } },
      });
      expect(again).toEqual({ found: true, completed: false, record });
      expect(await store().signals.read(runId)).toHaveLength(1);
      expect(await store().promises.complete(newToken(), { outcome: 'resolved', payload })).toEqual({
        found: false,
      });
    });

    it('lets exactly one of several concurrent completions through', async () => {
      const { token } = await runWithPromise(store());
      const answers = await Promise.all(
        [1, 2, 3, 4, 5].map((n) =>
          store().promises.complete(token, { outcome: 'resolved', payload: deliveryOf(token, n) }),
        ),
      );
      const winners = answers.filter((a) => a.found && a.completed);
      expect(winners).toHaveLength(1);
      const kept = (await store().promises.get(token))?.payload as { value: number };
      for (const answer of answers) {
        if (answer.found && !answer.completed) expect(answer.record.payload).toEqual(kept);
      }
    });

    it('wakes a run suspended waiting for a completion, and only such a run', async () => {
      const now = await store().leases.now();
      const waiting = await suspendedRun(store(), { signals: [PROMISE_SIGNAL], wakeAt: now + 60_000 });
      const token = newToken();
      await store().promises.create({ token, runId: waiting.runId, seq: 0, timeoutAt: null });
      expect(
        await store().promises.complete(token, { outcome: 'resolved', payload: deliveryOf(token, 'yes') }),
      ).toEqual({ found: true, completed: true, runId: waiting.runId, wake: true });
      const lease = await store().leases.get(waiting.runId);
      expect(lease).toMatchObject({ epoch: waiting.epoch, owner: null, state: 'held' });
      expect(await store().timers.claimDue(1000, 60_000)).not.toContainEqual(
        expect.objectContaining({ runId: waiting.runId }),
      );
      expect(await acquireOk(store(), waiting.runId, 'worker-b')).toBe(waiting.epoch + 1);

      const other = await suspendedRun(store(), { signals: ['approve'] });
      const second = newToken();
      await store().promises.create({ token: second, runId: other.runId, seq: 0, timeoutAt: null });
      expect(
        await store().promises.complete(second, { outcome: 'resolved', payload: deliveryOf(second, 1) }),
      ).toEqual({ found: true, completed: true, runId: other.runId, wake: false });
      expect(await store().leases.get(other.runId)).toMatchObject({ state: 'suspended' });
    });

    it('keeps a run from suspending while its completion waits in the inbox unread', async () => {
      const { runId, epoch, token, seq } = await runWithPromise(store());
      await store().promises.complete(token, { outcome: 'resolved', payload: deliveryOf(token, 1) });
      const wait = { runId, epoch, wakeAt: null, signals: [PROMISE_SIGNAL], consumedSignalIds: [] };
      expect(await store().leases.suspend(wait)).toEqual({ ok: false, reason: 'signal-pending' });
      expect(await store().leases.suspend({ ...wait, consumedSignalIds: [signalIdOf(seq)] })).toEqual({
        ok: true,
      });
    });

    it('completes the promise of a paused run without waking it; the completion waits for the resume', async () => {
      const { runId, token, seq } = await runWithPromise(store());
      expect(await store().control.requestPause(runId)).toEqual({ found: true, state: 'pause-requested' });
      const { runId: parked, epoch: parkedEpoch } = await suspendedRun(store(), {
        signals: [PROMISE_SIGNAL],
      });
      await store().control.requestPause(parked);
      const parkedToken = newToken();
      await store().promises.create({ token: parkedToken, runId: parked, seq: 0, timeoutAt: null });
      expect(
        await store().promises.complete(parkedToken, {
          outcome: 'resolved',
          payload: deliveryOf(parkedToken, 7),
        }),
      ).toEqual({ found: true, completed: true, runId: parked, wake: false });
      expect(await store().leases.get(parked)).toMatchObject({ state: 'paused', epoch: parkedEpoch + 1 });
      expect((await store().signals.read(parked)).map((s) => s.signalId)).toEqual([signalIdOf(0)]);
      expect(await store().control.resume(parked)).toEqual({ found: true, resumed: true, wake: true });
      // The held run with a pause requested takes its completion as any held run does.
      expect(
        (await store().promises.complete(token, { outcome: 'resolved', payload: deliveryOf(token, 8) }))
          .found,
      ).toBe(true);
      expect((await store().signals.read(runId)).map((s) => s.signalId)).toEqual([signalIdOf(seq)]);
    });

    it('refuses to complete the promise of a finished run, which stays pending', async () => {
      const { runId, epoch, token } = await runWithPromise(store());
      await store().runs.finish(
        runId,
        epoch,
        { status: 'completed', result: 1 },
        checkpointOf(runId, epoch, 1),
      );
      const answer = await store().promises.complete(token, {
        outcome: 'resolved',
        payload: deliveryOf(token, 1),
      });
      expect(answer).toEqual({
        found: true,
        completed: false,
        runFinished: true,
        record: expect.objectContaining({ token, state: 'pending' }),
      });
      expect(await store().signals.read(runId)).toEqual([]);
    });

    it('expires a pending promise at its deadline; a completion that came first is kept and returned', async () => {
      const { token } = await runWithPromise(store(), { timeoutAt: (await store().leases.now()) - 1 });
      const expired = await store().promises.expire(token);
      expect(expired).toMatchObject({ token, state: 'timed-out', completedAt: expect.any(Number) });
      expect(expired?.payload).toBeUndefined();
      expect(await store().promises.expire(token)).toEqual(expired);
      expect(
        await store().promises.complete(token, { outcome: 'resolved', payload: deliveryOf(token, 1) }),
      ).toEqual({ found: true, completed: false, record: expired });

      const { token: raced } = await runWithPromise(store());
      const payload = { token: raced, outcome: 'rejected', error: { name: 'Error', message: 'declined' } };
      await store().promises.complete(raced, { outcome: 'rejected', payload });
      expect(await store().promises.expire(raced)).toMatchObject({ state: 'rejected', payload });
      expect(await store().promises.expire(newToken())).toBeUndefined();
    });

    it('deletes a run’s promises with the run', async () => {
      const { runId, epoch, token } = await runWithPromise(store());
      const kept = await runWithPromise(store());
      await store().promises.complete(token, { outcome: 'resolved', payload: deliveryOf(token, 1) });
      await store().runs.finish(
        runId,
        epoch,
        { status: 'completed', result: 1 },
        checkpointOf(runId, epoch, 1),
      );
      expect(await store().retention.delete(runId)).toBe(true);
      expect(await store().promises.get(token)).toBeUndefined();
      expect(await store().promises.forRun(runId)).toEqual([]);
      expect(
        await store().promises.complete(token, { outcome: 'resolved', payload: deliveryOf(token, 2) }),
      ).toEqual({ found: false });
      expect(await store().promises.get(kept.token)).toMatchObject({ state: 'pending' });
    });
  });
}
