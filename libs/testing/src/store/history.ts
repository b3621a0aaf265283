/**
 * Store conformance, time-travel section: every checkpoint kept and loadable by its sequence
 * number, a run created with a first checkpoint (a fork), and reopening a failed run (a retry).
 */
import { describe, expect, it } from 'vitest';
import type { RunOutcome, Store } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';
import { acquireOk, checkpointOf, createTestRun, SHORT_TTL_MS } from './helpers.js';

const ERROR = { name: 'Error', message: 'bureau down' };
const FAILED: RunOutcome = { status: 'failed', error: ERROR };

/** A run claimed, checkpointed twice and failed with a final checkpoint (seq 3). */
async function failedRun(store: Store): Promise<{ runId: string; epoch: number }> {
  const { runId } = await createTestRun(store, 'failed');
  const epoch = await acquireOk(store, runId, 'worker-a');
  await store.checkpoints.write(checkpointOf(runId, epoch, 1));
  await store.checkpoints.write(checkpointOf(runId, epoch, 2));
  await store.runs.finish(runId, epoch, FAILED, checkpointOf(runId, epoch, 3, { status: 'failed' }));
  return { runId, epoch };
}

/** Registers the history, fork-seeding and reopen tests; `store()` is the test's fresh store. */
export function describeHistoryConformance(store: () => Store): void {
  describe('checkpoint history', () => {
    it('keeps every checkpoint, including the final one, and loads any of them by seq', async () => {
      const { runId, epoch } = await failedRun(store());
      const summaries = await store().checkpoints.list(runId);
      expect(summaries.map((s) => [s.seq, s.status, s.journalPosition, s.schemaVersion])).toEqual([
        [1, 'running', 10, 1],
        [2, 'running', 20, 1],
        [3, 'failed', 30, 1],
      ]);
      expect(summaries.every((s) => s.size > 0 && s.createdAt > 0)).toBe(true);
      expect(await store().checkpoints.load(runId, 2)).toEqual(checkpointOf(runId, epoch, 2));
      expect(await store().checkpoints.load(runId, 1)).toEqual(checkpointOf(runId, epoch, 1));
      expect(await store().checkpoints.load(runId, 9)).toBeUndefined();
      expect((await store().checkpoints.load(runId))?.seq).toBe(3);
    });
  });

  describe('forked runs', () => {
    it('creates a run with its first checkpoint in one step, and the first owner may build on it', async () => {
      const runId = uniqueId('fork');
      const seed = checkpointOf(runId, 0, 1, { journalPosition: 0 });
      const { created, run } = await store().runs.create({
        runId,
        workflow: 'conformance',
        version: 1,
        input: { n: 1 },
        idempotencyKey: null,
        checkpoint: seed,
        forkedFrom: { runId: 'original', checkpoint: 3 },
      });
      expect(created).toBe(true);
      expect(run).toMatchObject({ status: 'pending', attempts: 0 });
      expect((await store().runs.get(runId))?.forkedFrom).toEqual({ runId: 'original', checkpoint: 3 });
      expect(await store().checkpoints.load(runId)).toEqual(seed);
      const epoch = await acquireOk(store(), runId, 'worker-a');
      expect(epoch).toBe(1);
      await store().checkpoints.write(checkpointOf(runId, epoch, 2));
      expect((await store().checkpoints.list(runId)).map((s) => [s.seq, s.epoch])).toEqual([
        [1, 0],
        [2, 1],
      ]);
    });

    it('stores no checkpoint when the run already exists', async () => {
      const { runId } = await createTestRun(store());
      const { created } = await store().runs.create({
        runId,
        workflow: 'conformance',
        version: 1,
        input: null,
        idempotencyKey: null,
        checkpoint: checkpointOf(runId, 0, 1),
      });
      expect(created).toBe(false);
      expect(await store().checkpoints.list(runId)).toEqual([]);
      expect((await store().runs.get(runId))?.forkedFrom).toBeUndefined();
    });
  });

  describe('reopening failed runs', () => {
    it('reopens a failed run: checkpoint kept, run pending without its error, lease acquirable at the next epoch', async () => {
      const { runId, epoch } = await failedRun(store());
      const redrive = checkpointOf(runId, epoch, 4);
      expect(await store().runs.reopen(runId, redrive)).toEqual({ reopened: true });
      const run = await store().runs.get(runId);
      expect(run).toMatchObject({ status: 'pending' });
      expect(run?.error).toBeUndefined();
      expect(await store().checkpoints.load(runId)).toEqual(redrive);
      expect(await store().leases.get(runId)).toMatchObject({ state: 'held', owner: null, epoch });
      const next = await acquireOk(store(), runId, 'worker-b');
      expect(next).toBe(epoch + 1);
      expect(await store().runs.get(runId)).toMatchObject({ status: 'running' });
      await store().runs.finish(runId, next, { status: 'completed', result: 1 });
      expect(await store().runs.get(runId)).toMatchObject({ status: 'completed', result: 1 });
    });

    it('puts a reopened run in the reaper queue, so a lost resume message is re-sent', async () => {
      const { runId, epoch } = await failedRun(store());
      await store().runs.reopen(runId, checkpointOf(runId, epoch, 4));
      expect(await store().leases.reapExpired(1_000, SHORT_TTL_MS)).toContain(runId);
    });

    it('reopens once when two redrives race; the other finds the run pending', async () => {
      const { runId, epoch } = await failedRun(store());
      const results = await Promise.all([
        store().runs.reopen(runId, checkpointOf(runId, epoch, 4)),
        store().runs.reopen(runId, checkpointOf(runId, epoch, 4)),
      ]);
      expect(results.filter((r) => r.reopened)).toHaveLength(1);
      expect((await store().checkpoints.list(runId)).map((s) => s.seq)).toEqual([1, 2, 3, 4]);
    });

    it('refuses runs that are not failed, unknown runs and a stale epoch, changing nothing', async () => {
      const { runId: completed } = await createTestRun(store());
      const epoch = await acquireOk(store(), completed, 'worker-a');
      await store().runs.finish(completed, epoch, { status: 'completed', result: 1 });
      expect(await store().runs.reopen(completed, checkpointOf(completed, epoch, 2))).toEqual({
        reopened: false,
        status: 'completed',
      });
      const { runId: running } = await createTestRun(store());
      const runningEpoch = await acquireOk(store(), running, 'worker-a');
      expect(await store().runs.reopen(running, checkpointOf(running, runningEpoch, 1))).toEqual({
        reopened: false,
        status: 'running',
      });
      const unknown = uniqueId('unknown');
      expect(await store().runs.reopen(unknown, checkpointOf(unknown, 1, 1))).toEqual({
        reopened: false,
        status: undefined,
      });
      const { runId: failed, epoch: failedEpoch } = await failedRun(store());
      expect(await store().runs.reopen(failed, checkpointOf(failed, failedEpoch + 1, 4))).toMatchObject({
        reopened: false,
      });
      expect(await store().runs.get(failed)).toMatchObject({ status: 'failed', error: ERROR });
      expect(await store().checkpoints.list(completed)).toEqual([]);
      expect((await store().checkpoints.list(failed)).map((s) => s.seq)).toEqual([1, 2, 3]);
    });
  });
}
