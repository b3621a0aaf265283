/**
 * Store conformance, RunIndex and CheckpointStore sections: run records, idempotency keys,
 * fenced checkpoints with history, and finishing a run.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RunOutcome, Store } from '@baton/core/adapter';
import {
  linkEntries,
  chainGenesis,
  openCheckpoint,
  protectCheckpoint,
  resolvePayloadProtection,
  type PayloadProtection,
  type ProtectedCheckpoint,
} from '@baton/core/runtime';
import { setTimeout as sleep } from 'node:timers/promises';
import { uniqueId } from '../conformance-helpers.js';
import { EXPIRY_WAIT_MS, FENCED, SHORT_TTL_MS, acquireOk, checkpointOf, createTestRun } from './helpers.js';

const RESULT = { approved: true, score: 712 };
const COMPLETED: RunOutcome = { status: 'completed', result: RESULT };

/** Registers the run index, checkpoint and runs.finish tests; `store()` is the test's fresh store. */
export function describeRunConformance(store: () => Store): void {
  describe('run index', () => {
    it('creates a pending run with no attempts and returns it by id', async () => {
      const runId = uniqueId('run');
      const input = { applicantId: 'A-7291', amounts: [1, 2] };
      const created = await store().runs.create({
        runId,
        workflow: 'loan',
        version: 3,
        input,
        idempotencyKey: 'k',
      });
      expect(created).toEqual({
        created: true,
        run: {
          runId,
          workflow: 'loan',
          version: 3,
          input,
          idempotencyKey: 'k',
          status: 'pending',
          createdAt: expect.any(Number),
          updatedAt: expect.any(Number),
          attempts: 0,
        },
      });
      expect(await store().runs.get(runId)).toEqual(created.run);
      expect(await store().runs.get(uniqueId('unknown'))).toBeUndefined();
    });

    it("keeps the producer's trace context on the run record", async () => {
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const runId = uniqueId('run');
      const { run } = await store().runs.create({
        runId,
        workflow: 'loan',
        version: 1,
        input: null,
        idempotencyKey: null,
        traceparent,
      });
      expect(run.traceparent).toBe(traceparent);
      expect((await store().runs.get(runId))?.traceparent).toBe(traceparent);
      const untraced = uniqueId('run');
      await store().runs.create({
        runId: untraced,
        workflow: 'loan',
        version: 1,
        input: null,
        idempotencyKey: null,
      });
      expect((await store().runs.get(untraced))?.traceparent).toBeUndefined();
    });

    it('returns the existing run when the same run id is created again', async () => {
      const first = await createTestRun(store(), 'first');
      const again = await store().runs.create({ ...first, input: 'other', idempotencyKey: null });
      expect(again).toEqual({ created: false, run: first });
    });

    it('maps a repeated idempotency key to the first run', async () => {
      const key = uniqueId('key');
      const first = await createTestRun(store(), 'first', key);
      const secondId = uniqueId('second');
      const second = await store().runs.create({
        runId: secondId,
        workflow: 'conformance',
        version: 1,
        input: null,
        idempotencyKey: key,
      });
      expect(second).toEqual({ created: false, run: first });
      expect(await store().runs.get(secondId)).toBeUndefined();
    });

    it('creates exactly one run when the same run is created concurrently', async () => {
      const run = { runId: uniqueId('run'), workflow: 'w', version: 1, input: 1, idempotencyKey: null };
      const results = await Promise.all([
        store().runs.create(run),
        store().runs.create(run),
        store().runs.create(run),
      ]);
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(results.map((r) => r.run.runId))).toEqual(new Set([run.runId]));
    });

    it('creates exactly one run when one idempotency key races under different run ids', async () => {
      const key = uniqueId('key');
      const ids = [uniqueId('a'), uniqueId('b'), uniqueId('c')];
      const results = await Promise.all(
        ids.map((runId) =>
          store().runs.create({ runId, workflow: 'w', version: 1, input: 1, idempotencyKey: key }),
        ),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
      const winner = results.find((r) => r.created)?.run.runId;
      expect(results.map((r) => r.run.runId)).toEqual([winner, winner, winner]);
    });

    it('never treats runs without an idempotency key as duplicates', async () => {
      const a = await createTestRun(store(), 'a', null);
      const b = await createTestRun(store(), 'b', null);
      expect(a.runId).not.toBe(b.runId);
      expect(await store().runs.get(b.runId)).toEqual(b);
    });

    it('copies values in and out, so callers cannot change stored state', async () => {
      const run = await createTestRun(store());
      const loaded = await store().runs.get(run.runId);
      (loaded?.input as { label: string }).label = 'mutated';
      expect(await store().runs.get(run.runId)).toEqual(run);
    });
  });

  describe('create and lease in one step (runs.createAndLease)', () => {
    const claim: Store['runs']['createAndLease'] = (...args) => store().runs.createAndLease(...args);

    it('creates the run and leases it to the owner at epoch 1, the record showing the attempt', async () => {
      const runId = uniqueId('run');
      const taken = await claim(
        { runId, workflow: 'w', version: 2, input: { n: 1 }, idempotencyKey: null, traceparent: null },
        'worker-a',
        60_000,
      );
      expect(taken).toMatchObject({
        created: true,
        run: { runId, workflow: 'w', version: 2, input: { n: 1 }, status: 'running', attempts: 1 },
        lease: { ok: true, epoch: 1, cancelRequested: false },
      });
      expect(await store().runs.get(runId)).toEqual(taken.run);
      expect(await store().leases.get(runId)).toMatchObject({ state: 'held', owner: 'worker-a', epoch: 1 });
      // Fenced like any lease: a second owner is refused while it is held.
      expect(await store().leases.acquire(runId, 'worker-b', 60_000)).toMatchObject({
        ok: false,
        reason: 'held',
      });
    });

    it('answers the record it stored, with an idempotency key and a trace parent too', async () => {
      const runId = uniqueId('run');
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const taken = await claim(
        {
          runId,
          workflow: 'w',
          version: 1,
          input: { nested: { list: [1, 'two', null] } },
          idempotencyKey: uniqueId('key'),
          traceparent,
        },
        'worker-a',
        60_000,
      );
      expect(taken.created).toBe(true);
      expect(taken.run).toMatchObject({ traceparent, status: 'running', attempts: 1 });
      expect(taken.run.createdAt).toBe(taken.run.updatedAt);
      expect(await store().runs.get(runId)).toEqual(taken.run);
    });

    it('changes nothing for a known run id or idempotency key and returns the existing record', async () => {
      const key = uniqueId('key');
      const first = await createTestRun(store(), 'first', key);
      const again = await claim(
        { ...first, input: 'other', idempotencyKey: null, traceparent: null },
        'w-b',
        60_000,
      );
      expect(again).toEqual({ created: false, run: first });
      const otherId = uniqueId('other');
      const keyed = await claim(
        {
          runId: otherId,
          workflow: 'conformance',
          version: 1,
          input: null,
          idempotencyKey: key,
          traceparent: null,
        },
        'w-b',
        60_000,
      );
      expect(keyed).toEqual({ created: false, run: first });
      expect(await store().runs.get(otherId)).toBeUndefined();
      expect(await store().leases.get(first.runId)).toBeUndefined();
    });

    it('creates and leases exactly once when the same run is claimed concurrently', async () => {
      const run = {
        runId: uniqueId('run'),
        workflow: 'w',
        version: 1,
        input: 1,
        idempotencyKey: null,
        traceparent: null,
      };
      const results = await Promise.all(['a', 'b', 'c'].map((owner) => claim(run, owner, 60_000)));
      const winners = results.filter((r) => r.created);
      expect(winners).toHaveLength(1);
      const owner = ['a', 'b', 'c'][results.indexOf(winners[0]!)];
      expect(await store().leases.get(run.runId)).toMatchObject({ owner, epoch: 1 });
    });
  });

  describe('checkpoints', () => {
    it('stores checkpoints under the current epoch, newest loaded, all listed oldest first', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      const first = checkpointOf(runId, epoch, 1);
      const second = checkpointOf(runId, epoch, 2, { status: 'suspended' });
      await store().checkpoints.write(first);
      await store().checkpoints.write(second);
      expect(await store().checkpoints.load(runId)).toEqual(second);
      const summaries = await store().checkpoints.list(runId);
      expect(summaries).toEqual([
        {
          seq: 1,
          epoch,
          journalPosition: 10,
          status: 'running',
          schemaVersion: 1,
          createdAt: first.createdAt,
          size: expect.any(Number),
        },
        {
          seq: 2,
          epoch,
          journalPosition: 20,
          status: 'suspended',
          schemaVersion: 1,
          createdAt: second.createdAt,
          size: expect.any(Number),
        },
      ]);
      expect(summaries.every((s) => s.size > 0)).toBe(true);
    });

    it('refuses a checkpoint under a stale epoch and keeps the newer one', async () => {
      const { runId } = await createTestRun(store());
      const stale = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      await store().checkpoints.write(checkpointOf(runId, stale, 1));
      await sleep(EXPIRY_WAIT_MS);
      const current = await acquireOk(store(), runId, 'worker-b');
      const newer = checkpointOf(runId, current, 2);
      await store().checkpoints.write(newer);
      await expect(store().checkpoints.write(checkpointOf(runId, stale, 3))).rejects.toMatchObject(FENCED);
      expect(await store().checkpoints.load(runId)).toEqual(newer);
      expect((await store().checkpoints.list(runId)).map((s) => [s.seq, s.epoch])).toEqual([
        [1, stale],
        [2, current],
      ]);
    });

    it('refuses a checkpoint for a run nobody ever claimed', async () => {
      const { runId } = await createTestRun(store());
      await expect(store().checkpoints.write(checkpointOf(runId, 1, 1))).rejects.toMatchObject(FENCED);
      expect(await store().checkpoints.load(runId)).toBeUndefined();
      expect(await store().checkpoints.list(runId)).toEqual([]);
    });

    it('copies checkpoints in and out, so callers cannot change stored state', async () => {
      const runId = uniqueId('run');
      const epoch = await acquireOk(store(), runId, 'worker-a');
      const checkpoint = checkpointOf(runId, epoch, 1);
      const expected = structuredClone(checkpoint);
      await store().checkpoints.write(checkpoint);
      checkpoint.entries.length = 0;
      const loaded = await store().checkpoints.load(runId);
      expect(loaded).toEqual(expected);
      loaded?.entries.push(...expected.entries);
      expect(await store().checkpoints.load(runId)).toEqual(expected);
    });

    it('keeps the fields of a protected checkpoint (chain head, sealed entries, signature), so it verifies after loading', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      const protection = randomProtection();
      const written = protectedCheckpointOf(runId, epoch, 1, protection);
      expect(written).toMatchObject({
        entries: [],
        chainHead: expect.any(String),
        sealedEntries: expect.any(String),
        signature: { keyId: 's1', mac: expect.any(String) },
      });
      await store().checkpoints.write(written);
      const loaded = (await store().checkpoints.load(runId)) as ProtectedCheckpoint;
      expect(loaded).toEqual(written);
      expect(openCheckpoint(loaded, runId, protection).entries).toHaveLength(2);
      // The final checkpoint of runs.finish takes the same path.
      const final = protectedCheckpointOf(runId, epoch, 2, protection, 'completed');
      await store().runs.finish(runId, epoch, COMPLETED, final);
      const loadedFinal = (await store().checkpoints.load(runId)) as ProtectedCheckpoint;
      expect(loadedFinal).toEqual(final);
      expect(openCheckpoint(loadedFinal, runId, protection)).toMatchObject({ seq: 2, status: 'completed' });
    });
  });

  describe('finishing runs', () => {
    it('records a completed run with its final checkpoint and never lets it be acquired again', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      const final = checkpointOf(runId, epoch, 1, { status: 'completed' });
      await store().runs.finish(runId, epoch, COMPLETED, final);
      expect(await store().runs.get(runId)).toMatchObject({
        status: 'completed',
        result: RESULT,
        attempts: 1,
      });
      expect(await store().leases.get(runId)).toMatchObject({ state: 'finished', epoch, expiresAt: null });
      expect(await store().checkpoints.load(runId)).toEqual(final);
      expect(await store().leases.acquire(runId, 'worker-b', SHORT_TTL_MS)).toEqual({
        ok: false,
        reason: 'finished',
      });
      expect((await store().leases.renew([{ runId, epoch }], SHORT_TTL_MS))[0]?.ok).toBe(false);
      expect(await store().leases.reapExpired(100, SHORT_TTL_MS)).not.toContain(runId);
    });

    it('records failed and cancelled outcomes with their errors', async () => {
      const error = { name: 'Error', message: 'bureau down', code: 'E_BUREAU' };
      for (const status of ['failed', 'cancelled'] as const) {
        const { runId } = await createTestRun(store(), status);
        const epoch = await acquireOk(store(), runId, 'worker-a');
        await store().runs.finish(runId, epoch, { status, error });
        expect(await store().runs.get(runId)).toMatchObject({ status, error });
        expect(await store().checkpoints.list(runId)).toEqual([]);
      }
    });

    it('refuses to finish under a stale epoch and leaves the run to its new owner', async () => {
      const { runId } = await createTestRun(store());
      const stale = await acquireOk(store(), runId, 'worker-a', SHORT_TTL_MS);
      await sleep(EXPIRY_WAIT_MS);
      const current = await acquireOk(store(), runId, 'worker-b');
      await expect(store().runs.finish(runId, stale, COMPLETED)).rejects.toMatchObject(FENCED);
      expect((await store().runs.get(runId))?.status).toBe('running');
      expect(await store().leases.get(runId)).toMatchObject({
        epoch: current,
        state: 'held',
        owner: 'worker-b',
      });
    });

    it('refuses any write after the run finished, even under its last epoch', async () => {
      const { runId } = await createTestRun(store());
      const epoch = await acquireOk(store(), runId, 'worker-a');
      await store().runs.finish(runId, epoch, COMPLETED);
      await expect(store().runs.finish(runId, epoch, COMPLETED)).rejects.toMatchObject(FENCED);
      await expect(store().checkpoints.write(checkpointOf(runId, epoch, 9))).rejects.toMatchObject(FENCED);
      const wait = { runId, epoch, wakeAt: null, signals: [], consumedSignalIds: [] };
      await expect(store().leases.suspend(wait)).rejects.toMatchObject(FENCED);
      expect(await store().leases.release(runId, epoch)).toBe(false);
    });
  });
}

/** Encryption and signing with fresh random keys (ids k1 and s1). */
function randomProtection(): PayloadProtection {
  const key = (id: string): string => `${id}:${randomBytes(32).toString('base64')}`;
  return resolvePayloadProtection({ encryptionKeys: key('k1'), signingKeys: key('s1') }, {});
}

/** A checkpoint with two linked entries, as a protected worker writes it. */
function protectedCheckpointOf(
  runId: string,
  epoch: number,
  seq: number,
  protection: PayloadProtection,
  status: 'running' | 'completed' = 'running',
): ProtectedCheckpoint {
  const base = checkpointOf(runId, epoch, seq, { status });
  const { entries, head } = linkEntries(
    [
      ...base.entries,
      {
        type: 'ActivityCompleted',
        seq: 0,
        name: 'a',
        attempts: 1,
        epoch,
        at: base.createdAt,
        result: { nested: [1, 'two'] },
      },
    ],
    chainGenesis(runId),
  );
  return protectCheckpoint({ ...base, entries, chainHead: head }, protection);
}
