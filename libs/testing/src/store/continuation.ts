/**
 * Store conformance, a run continuing as new (`runs.continueAs`, contracts/run-index.ts in
 * @baton/core): the owner's fenced mark naming the successor, after which the run keeps no new
 * signal, update request or promise completion and every answer names the successor, while a
 * repeat of what it holds stays a repeat and its inbox and pending requests stay as they were, for
 * the owner to carry over.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { setTimeout as sleep } from 'node:timers/promises';
import { uniqueId } from '../conformance-helpers.js';
import { EXPIRY_WAIT_MS, FENCED, SHORT_TTL_MS, acquireOk, createTestRun } from './helpers.js';

/** A fresh promise token, in the shape core draws (`bp_` and 32 base64url characters). */
function newToken(): string {
  return `bp_${uniqueId('t')
    .replace(/[^A-Za-z0-9_-]/g, '')
    .padEnd(32, 'x')
    .slice(-32)}`;
}

/** Registers the continuation tests; `store()` is the test's fresh store. */
export function describeContinuationConformance(store: () => Store): void {
  describe('continue-as-new mark', () => {
    /** A claimed run holding one signal and one pending update, marked as continuing. */
    async function continuingRun() {
      const { runId } = await createTestRun(store(), 'continuing');
      const epoch = await acquireOk(store(), runId, 'worker-a');
      const successor = uniqueId('successor');
      await store().signals.deliver(runId, { signalId: 'before', name: 'go', payload: { n: 1.5 } });
      await store().updates.request(runId, { updateId: 'u-before', name: 'add', args: { n: 2 } });
      await store().runs.continueAs(runId, epoch, successor);
      return { runId, epoch, successor };
    }

    it('names the successor on the record, the first named kept, under the fence', async () => {
      const { runId, epoch, successor } = await continuingRun();
      expect((await store().runs.get(runId))?.continuedAs).toBe(successor);
      // A repeat, even one naming another run, keeps the first.
      await store().runs.continueAs(runId, epoch, 'another');
      expect((await store().runs.get(runId))?.continuedAs).toBe(successor);
      // Listed with it too.
      const listed = await store().runs.list({ limit: 100 });
      expect(listed.runs.find((r) => r.runId === runId)?.continuedAs).toBe(successor);
      // A run that did not continue has no mark.
      const plain = await createTestRun(store(), 'plain');
      expect((await store().runs.get(plain.runId))?.continuedAs).toBeUndefined();
    });

    it('is refused under a stale epoch and once the run is finished', async () => {
      const { runId } = await createTestRun(store(), 'fenced');
      const stale = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      await sleep(EXPIRY_WAIT_MS);
      const current = await acquireOk(store(), runId, 'worker-b');
      await expect(store().runs.continueAs(runId, stale, 'next')).rejects.toMatchObject(FENCED);
      expect((await store().runs.get(runId))?.continuedAs).toBeUndefined();
      await store().runs.finish(runId, current, { status: 'completed', result: 1 });
      await expect(store().runs.continueAs(runId, current, 'next')).rejects.toMatchObject(FENCED);
      expect((await store().runs.get(runId))?.continuedAs).toBeUndefined();
    });

    it('keeps no new signal: a new id answers the successor, a held id stays a repeat', async () => {
      const { runId, successor } = await continuingRun();
      expect(await store().signals.deliver(runId, { signalId: 'after', name: 'go', payload: 1 })).toEqual({
        found: true,
        wake: false,
        continuedAs: successor,
      });
      expect(await store().signals.deliver(runId, { signalId: 'before', name: 'go', payload: 9 })).toEqual({
        found: true,
        wake: false,
      });
      const inbox = await store().signals.read(runId);
      expect(inbox.map(({ signalId, name, payload }) => ({ signalId, name, payload }))).toEqual([
        { signalId: 'before', name: 'go', payload: { n: 1.5 } },
      ]);
    });

    it('keeps no new update request: a new id answers the successor, a settled id its outcome', async () => {
      const { runId, epoch, successor } = await continuingRun();
      const kept = await store().updates.settle(runId, epoch, {
        updateId: 'u-settled',
        name: 'add',
        outcome: { status: 'completed', result: 3 },
      });
      expect(await store().updates.request(runId, { updateId: 'u-after', name: 'add', args: 1 })).toEqual({
        found: true,
        wake: false,
        continuedAs: successor,
      });
      expect(await store().updates.request(runId, { updateId: 'u-settled', name: 'add', args: 1 })).toEqual({
        found: true,
        wake: false,
        kept,
      });
      // The request pending at the mark stays pending, for the owner to carry over.
      expect((await store().updates.pending(runId)).map((r) => [r.updateId, r.args])).toEqual([
        ['u-before', { n: 2 }],
      ]);
    });

    it("refuses a completion of the run's promise, naming the successor, and keeps it pending", async () => {
      const { runId } = await createTestRun(store(), 'promising');
      const epoch = await acquireOk(store(), runId, 'worker-a');
      const token = newToken();
      await store().promises.create({ token, runId, seq: 3, timeoutAt: null });
      await store().runs.continueAs(runId, epoch, 'the-successor');
      const answer = await store().promises.complete(token, { outcome: 'resolved', payload: { v: 1 } });
      expect(answer).toMatchObject({
        found: true,
        completed: false,
        runFinished: true,
        continuedAs: 'the-successor',
        record: { token, runId, seq: 3, state: 'pending' },
      });
      expect(await store().signals.read(runId)).toEqual([]);
    });

    it('answers with the successor after the end too, saying the run has finished', async () => {
      const { runId, epoch, successor } = await continuingRun();
      await store().runs.finish(runId, epoch, { status: 'completed', result: { next: successor } });
      expect(await store().signals.deliver(runId, { signalId: 'late', name: 'go', payload: 1 })).toEqual({
        found: true,
        wake: false,
        dropped: true,
        continuedAs: successor,
      });
      expect(await store().signals.deliver(runId, { signalId: 'before', name: 'go', payload: 1 })).toEqual({
        found: true,
        wake: false,
      });
      expect(await store().updates.request(runId, { updateId: 'u-late', name: 'add', args: 1 })).toEqual({
        found: true,
        wake: false,
        finished: true,
        continuedAs: successor,
      });
      const record = await store().runs.get(runId);
      expect(record).toMatchObject({ status: 'completed', continuedAs: successor });
    });
  });
}
