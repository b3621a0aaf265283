/**
 * Store conformance, retention section: finished runs past their time to live are listed oldest
 * first and deleted with everything the store keeps of them; an unfinished run is never listed
 * nor deleted, whatever its age.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { RunOutcome, Store } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';
import { sha256Of } from '../payload-store/index.js';
import { acquireOk, checkpointOf, createTestRun, suspendedRun } from './helpers.js';

const COMPLETED: RunOutcome = { status: 'completed', result: { ok: true } };
const FAILED: RunOutcome = { status: 'failed', error: { name: 'Error', message: 'bureau down' } };
const CANCELLED: RunOutcome = { status: 'cancelled', error: { name: 'CancelledError', message: 'stop' } };
/** Older than this once {@link AGE_WAIT_MS} has passed; far below the "young" threshold. */
const TTL_MS = 150;
const AGE_WAIT_MS = 300;
const LONG_AGO_MS = 60 * 60_000;

/** A run created (with an idempotency key), claimed, checkpointed, signalled and finished. */
async function finishedRun(store: Store, outcome: RunOutcome): Promise<string> {
  const { runId } = await createTestRun(store, outcome.status, uniqueId('key'));
  const epoch = await acquireOk(store, runId, 'worker-a');
  await store.checkpoints.write(checkpointOf(runId, epoch, 1));
  await store.signals.deliver(runId, { signalId: uniqueId('sig'), name: 'late', payload: 1 });
  await store.runs.finish(runId, epoch, outcome, checkpointOf(runId, epoch, 2, { status: outcome.status }));
  // Distinct finish times, so "oldest first" has one answer.
  await sleep(5);
  return runId;
}

/** Registers the retention tests; `store()` is the test's fresh store. */
export function describeRetentionConformance(store: () => Store): void {
  describe('retention', () => {
    it('lists finished runs older than the TTL, oldest first, at most `limit`, and no younger ones', async () => {
      const completed = await finishedRun(store(), COMPLETED);
      const failed = await finishedRun(store(), FAILED);
      const cancelled = await finishedRun(store(), CANCELLED);
      expect(await store().retention.expired(LONG_AGO_MS, 10)).toEqual([]);
      await sleep(AGE_WAIT_MS);
      expect(await store().retention.expired(TTL_MS, 10)).toEqual([completed, failed, cancelled]);
      expect(await store().retention.expired(TTL_MS, 2)).toEqual([completed, failed]);
      expect(await store().retention.expired(TTL_MS, 0)).toEqual([]);
    });

    it('deletes a finished run with its record, checkpoints, lease, signals and idempotency key', async () => {
      const runId = await finishedRun(store(), COMPLETED);
      const key = (await store().runs.get(runId))?.idempotencyKey ?? null;
      await store().control.requestCancel(runId);
      expect(await store().retention.delete(runId)).toBe(true);
      expect(await store().runs.get(runId)).toBeUndefined();
      expect(await store().leases.get(runId)).toBeUndefined();
      expect(await store().checkpoints.list(runId)).toEqual([]);
      expect(await store().checkpoints.load(runId)).toBeUndefined();
      expect(await store().signals.read(runId)).toEqual([]);
      await sleep(AGE_WAIT_MS);
      expect(await store().retention.expired(TTL_MS, 10)).toEqual([]);
      expect(await store().retention.delete(runId)).toBe(false);
      // The key is free again: a new run may take it.
      const again = await store().runs.create({
        runId: uniqueId('again'),
        workflow: 'conformance',
        version: 1,
        input: null,
        idempotencyKey: key,
      });
      expect(again.created).toBe(true);
    });

    it("deletes a finished run's large payloads with it, and an unfinished run's never", async () => {
      const data = new TextEncoder().encode('{"big":true}');
      const hash = sha256Of(data);
      const finished = await finishedRun(store(), COMPLETED);
      const running = (await createTestRun(store(), 'running')).runId;
      await acquireOk(store(), running, 'worker-a');
      // A start message's input, stored before any worker created the run.
      const neverCreated = uniqueId('input-only');
      for (const runId of [finished, running, neverCreated]) await store().payloads.put(runId, hash, data);
      expect(await store().retention.delete(finished)).toBe(true);
      expect(await store().payloads.get(finished, hash)).toBeUndefined();
      await expect(store().retention.delete(running)).rejects.toMatchObject({ code: 'BATON_RUN_STATE' });
      expect(await store().payloads.get(running, hash)).toEqual(data);
      expect(await store().retention.delete(neverCreated)).toBe(false);
      expect(await store().payloads.get(neverCreated, hash)).toBeUndefined();
    });

    it('never lists nor deletes an unfinished run, however old, and names its status', async () => {
      const pending = (await createTestRun(store(), 'pending')).runId;
      const running = (await createTestRun(store(), 'running')).runId;
      await acquireOk(store(), running, 'worker-a');
      const suspended = (await suspendedRun(store(), { signals: ['approve'] })).runId;
      const claimedOnly = uniqueId('lease-only');
      await acquireOk(store(), claimedOnly, 'worker-a');
      await sleep(AGE_WAIT_MS);
      expect(await store().retention.expired(TTL_MS, 10)).toEqual([]);
      const cases: [string, string][] = [
        [pending, 'pending'],
        [running, 'running'],
        [suspended, 'suspended'],
        [claimedOnly, 'running'],
      ];
      for (const [runId, status] of cases) {
        await expect(store().retention.delete(runId)).rejects.toMatchObject({
          code: 'BATON_RUN_STATE',
          status,
          message: expect.stringContaining(`run ${runId} is ${status}`),
        });
      }
      expect((await store().runs.get(suspended))?.status).toBe('suspended');
      expect((await store().leases.get(suspended))?.state).toBe('suspended');
      expect(await store().retention.delete(uniqueId('unknown'))).toBe(false);
    });

    it('forgets a reopened (retried) run: neither listed nor deletable until it finishes again', async () => {
      const { runId } = await createTestRun(store(), 'retried');
      const epoch = await acquireOk(store(), runId, 'worker-a');
      await store().runs.finish(runId, epoch, FAILED, checkpointOf(runId, epoch, 1, { status: 'failed' }));
      expect(await store().runs.reopen(runId, checkpointOf(runId, epoch, 2))).toEqual({ reopened: true });
      await sleep(AGE_WAIT_MS);
      expect(await store().retention.expired(TTL_MS, 10)).toEqual([]);
      await expect(store().retention.delete(runId)).rejects.toMatchObject({ status: 'pending' });
      expect(await store().checkpoints.list(runId)).toHaveLength(2);
    });

    it('deletes expired finished runs in one batch, oldest first, with everything of each, leaving a tombstone', async () => {
      const data = new TextEncoder().encode('{"big":true}');
      const hash = sha256Of(data);
      const oldest = await finishedRun(store(), COMPLETED);
      const middle = await finishedRun(store(), FAILED);
      const newest = await finishedRun(store(), CANCELLED);
      const key = (await store().runs.get(oldest))?.idempotencyKey ?? null;
      await store().payloads.put(oldest, hash, data);
      const running = (await createTestRun(store(), 'running')).runId;
      await acquireOk(store(), running, 'worker-a');
      expect(await store().retention.deleteExpired(LONG_AGO_MS, 10, LONG_AGO_MS)).toEqual([]);
      await sleep(AGE_WAIT_MS);
      const young = await finishedRun(store(), COMPLETED);

      expect(await store().retention.deleteExpired(TTL_MS, 2, LONG_AGO_MS)).toEqual([oldest, middle]);
      expect(await store().retention.deleteExpired(TTL_MS, 10, LONG_AGO_MS)).toEqual([newest]);
      expect(await store().retention.deleteExpired(TTL_MS, 10, LONG_AGO_MS)).toEqual([]);

      for (const runId of [oldest, middle, newest]) {
        expect(await store().runs.get(runId)).toBeUndefined();
        expect(await store().leases.get(runId)).toBeUndefined();
        expect(await store().checkpoints.list(runId)).toEqual([]);
        expect(await store().signals.read(runId)).toEqual([]);
        expect(await store().retention.tombstone(runId)).toEqual({ runId, deletedAt: expect.any(Number) });
      }
      expect(await store().payloads.get(oldest, hash)).toBeUndefined();
      expect((await store().runs.get(young))?.status).toBe('completed');
      expect((await store().runs.get(running))?.status).toBe('running');
      expect(await store().retention.tombstone(young)).toBeUndefined();
      expect(await store().retention.tombstone(uniqueId('never-known'))).toBeUndefined();
      const again = await store().runs.create({
        runId: uniqueId('again'),
        workflow: 'conformance',
        version: 1,
        input: null,
        idempotencyKey: key,
      });
      expect(again.created).toBe(true);
    });

    it('a tombstone ends with its life; deleteRun leaves none', async () => {
      const swept = await finishedRun(store(), COMPLETED);
      const deletedById = await finishedRun(store(), COMPLETED);
      expect(await store().retention.delete(deletedById)).toBe(true);
      await sleep(AGE_WAIT_MS);
      const before = await store().leases.now();
      expect(await store().retention.deleteExpired(TTL_MS, 10, TTL_MS)).toEqual([swept]);
      const tombstone = await store().retention.tombstone(swept);
      expect(tombstone?.deletedAt).toBeGreaterThanOrEqual(before);
      expect(await store().retention.tombstone(deletedById)).toBeUndefined();
      await sleep(AGE_WAIT_MS);
      expect(await store().retention.tombstone(swept)).toBeUndefined();
      // The next batch drops expired tombstones for good; nothing else changes.
      expect(await store().retention.deleteExpired(TTL_MS, 10, TTL_MS)).toEqual([]);
      expect(await store().retention.tombstone(swept)).toBeUndefined();
    });

    it('batches running at once delete disjoint runs, and together every expired one', async () => {
      const runIds: string[] = [];
      for (let i = 0; i < 12; i += 1) runIds.push(await finishedRun(store(), COMPLETED));
      await sleep(AGE_WAIT_MS);
      const batches = await Promise.all(
        [0, 1, 2, 3].map(() => store().retention.deleteExpired(TTL_MS, 4, LONG_AGO_MS)),
      );
      const deleted = batches.flat();
      expect(new Set(deleted).size).toBe(deleted.length);
      const rest = await store().retention.deleteExpired(TTL_MS, 100, LONG_AGO_MS);
      expect([...deleted, ...rest].sort()).toEqual([...runIds].sort());
      expect(new Set([...deleted, ...rest]).size).toBe(runIds.length);
    });
  });
}
