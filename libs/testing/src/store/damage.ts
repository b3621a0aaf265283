/**
 * Store conformance, the edges of a claim: counting failed claims in a row
 * (`leases.recordClaimFailure`), and loading checkpoints whose stored bytes were damaged by hand, as a
 * disk fault, a restore or an operator's edit would leave them. Every store must turn a damaged
 * checkpoint into CheckpointUnreadableError naming the run and the checkpoint's seq, and keep the
 * others loadable, so a worker can resume from an older one instead of looping.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { acquireOk, checkpointOf, createTestRun, FENCED } from './helpers.js';

/**
 * How a store's spec damages a stored checkpoint behind the store's back (a second connection):
 * - `garbage`: the record is no longer a checkpoint object at all (not JSON where the store keeps
 *   text; a bare string where it keeps a JSON column);
 * - `entries-not-list`: `entries` is an object;
 * - `field-missing`: the `status` field is gone.
 */
export type CheckpointDamage = 'garbage' | 'entries-not-list' | 'field-missing';
export type CheckpointDamager = (
  store: Store,
  runId: string,
  seq: number,
  damage: CheckpointDamage,
) => Promise<void>;

/** The shape a CheckpointUnreadableError must have, whichever copy of `@baton/core` raised it. */
function unreadable(runId: string, seq: number) {
  return {
    name: 'CheckpointUnreadableError',
    code: 'BATON_CHECKPOINT_UNREADABLE',
    runId,
    seq,
    message: expect.stringContaining(`run ${runId}: checkpoint ${seq}`),
  };
}

/** A run claimed and checkpointed three times (seqs 1, 2, 3). */
async function checkpointedRun(store: Store): Promise<{ runId: string; epoch: number }> {
  const { runId } = await createTestRun(store, 'damaged');
  const epoch = await acquireOk(store, runId, 'worker-a');
  for (const seq of [1, 2, 3]) await store.checkpoints.write(checkpointOf(runId, epoch, seq));
  return { runId, epoch };
}

/** Registers the failed-claim section; `store()` is the test's fresh store. */
export function describeClaimFailureConformance(store: () => Store): void {
  describe('failed claims in a row', () => {
    it('counts failures under consecutive epochs, once per epoch, and starts again after a claim that recorded none', async () => {
      const { runId } = await createTestRun(store(), 'claim-failures');
      const first = await acquireOk(store(), runId, 'worker-a');
      expect(await store().leases.recordClaimFailure(runId, first)).toBe(1);
      expect(await store().leases.recordClaimFailure(runId, first)).toBe(1);
      await store().leases.release(runId, first);
      const second = await acquireOk(store(), runId, 'worker-b');
      expect(second).toBe(first + 1);
      expect(await store().leases.recordClaimFailure(runId, second)).toBe(2);
      await store().leases.release(runId, second);
      // A claim that went well writes nothing; the next failure starts a new chain.
      const fine = await acquireOk(store(), runId, 'worker-a');
      await store().leases.release(runId, fine);
      const later = await acquireOk(store(), runId, 'worker-b');
      expect(await store().leases.recordClaimFailure(runId, later)).toBe(1);
    });

    it('refuses a stale epoch, a finished run and an unknown run with FencedWriteError', async () => {
      const { runId } = await createTestRun(store(), 'claim-failures');
      const first = await acquireOk(store(), runId, 'worker-a');
      await store().leases.release(runId, first);
      const second = await acquireOk(store(), runId, 'worker-b');
      await expect(store().leases.recordClaimFailure(runId, first)).rejects.toMatchObject(FENCED);
      await store().runs.finish(runId, second, { status: 'completed', result: 1 });
      await expect(store().leases.recordClaimFailure(runId, second)).rejects.toMatchObject(FENCED);
      await expect(store().leases.recordClaimFailure(`${runId}-unknown`, 1)).rejects.toMatchObject(FENCED);
    });

    it('forgets the failures of a run reopened for a retry', async () => {
      const { runId } = await createTestRun(store(), 'claim-failures');
      const first = await acquireOk(store(), runId, 'worker-a');
      expect(await store().leases.recordClaimFailure(runId, first)).toBe(1);
      const error = { name: 'ResumeFailedError', message: 'resume failed' };
      await store().runs.finish(runId, first, { status: 'failed', error }, checkpointOf(runId, first, 1));
      expect(await store().runs.reopen(runId, checkpointOf(runId, first, 2))).toEqual({ reopened: true });
      const next = await acquireOk(store(), runId, 'worker-b');
      expect(next).toBe(first + 1);
      expect(await store().leases.recordClaimFailure(runId, next)).toBe(1);
    });
  });
}

/** Registers the damaged-checkpoint section; `damage` reaches behind the store. */
export function describeDamagedCheckpointConformance(store: () => Store, damage: CheckpointDamager): void {
  describe('damaged checkpoints', () => {
    for (const kind of ['garbage', 'entries-not-list', 'field-missing'] as const) {
      it(`raises CheckpointUnreadableError naming the run and seq for a newest checkpoint damaged as ${kind}, and still loads the others`, async () => {
        const { runId, epoch } = await checkpointedRun(store());
        await damage(store(), runId, 3, kind);
        await expect(store().checkpoints.load(runId)).rejects.toMatchObject(unreadable(runId, 3));
        await expect(store().checkpoints.load(runId, 3)).rejects.toMatchObject(unreadable(runId, 3));
        expect(await store().checkpoints.load(runId, 2)).toEqual(checkpointOf(runId, epoch, 2));
        expect((await store().checkpoints.list(runId)).map((s) => s.seq)).toEqual([1, 2, 3]);
      });
    }

    it('raises it for an older damaged checkpoint loaded by seq, while the newest loads', async () => {
      const { runId, epoch } = await checkpointedRun(store());
      await damage(store(), runId, 1, 'entries-not-list');
      expect(await store().checkpoints.load(runId)).toEqual(checkpointOf(runId, epoch, 3));
      await expect(store().checkpoints.load(runId, 1)).rejects.toMatchObject(unreadable(runId, 1));
    });
  });
}
