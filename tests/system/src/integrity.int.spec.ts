/**
 * Payload protection on the real adapters (NATS + Redis, NATS + Postgres, Kafka + Redis), with
 * real Worker instances in this process, encryption and checkpoint signing on:
 * - runs complete, and neither the bus nor the store holds an activity result in the clear;
 * - keys rotate: a run written under k1/s1 resumes on a worker writing with k2/s2;
 * - a record replayed on the bus, or a checkpoint edited in the store, fails the run with a
 *   CheckpointIntegrityError naming the run and the entry, and nothing runs again from it;
 * - a missing key, or a checkpoint of a newer schema version, leaves the run intact (suspended,
 *   retried later) with an error naming the key id or the version.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { Store, Transport } from '@baton/core/adapter';
import {
  CHECKPOINT_SCHEMA_VERSION,
  FRAME_MAGIC,
  resolvePayloadProtection,
  type PayloadProtection,
  type ProtectedCheckpoint,
} from '@baton/core/runtime';
import { Worker, type WorkerEvent } from '@baton/worker';
import { inProcessNamespace, IN_PROCESS_PAIRS, until } from './in-process.spec-helper.js';

/** What the first activity returns: must never appear in the clear on the bus or in the store. */
const MARKER = `plaintext-marker-${randomBytes(6).toString('hex')}`;

const key = (id: string): string => `${id}:${randomBytes(32).toString('base64')}`;
const K1 = key('k1');
const K2 = key('k2');
const S1 = key('s1');
const S2 = key('s2');
const protect = (encryptionKeys: string, signingKeys: string): PayloadProtection =>
  resolvePayloadProtection({ encryptionKeys, signingKeys }, {});
/** k1/s1, before a rotation. */
const BEFORE = protect(K1, S1);
/** k2/s2 active, k1/s1 kept to read older data. */
const ROTATED = protect(`${K2},${K1}`, `${S2},${S1}`);

/** Executions per idempotency key: the outside world's view of side effects. */
const executions = new Map<string, number>();
const executed = (key: string): number => executions.get(key) ?? 0;
const record = (key: string): void => void executions.set(key, executed(key) + 1);

const reveal = defineActivity({
  name: 'reveal',
  run: async (_: null, io) => (record(io.idempotencyKey), `${MARKER}:${io.idempotencyKey}`),
});
const measure = defineActivity({
  name: 'measure',
  run: async (text: string, io) => (record(io.idempotencyKey), text.length),
});
/** Reveals a secret, waits for `go` (suspended, checkpointed), then measures it: the result holds no secret. */
const secretLength = defineWorkflow({
  name: 'secret_length',
  version: 1,
  run: async (ctx) => {
    const text = await ctx.run(reveal, null);
    await ctx.waitForSignal('go');
    return ctx.run(measure, text);
  },
});
/** Step numbers: reveal #0, waitForSignal #1, measure #2. */
const REVEAL = 0;
const MEASURE = 2;

describe.each(IN_PROCESS_PAIRS)('payload protection on $name', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'i');
  const workers = ns.workers;
  let transport: Transport;
  let store: Store;
  let client: Client;
  let events: WorkerEvent[] = [];
  beforeAll(() => {
    ({ transport, store } = ns);
    // A producer of this fleet holds its keys: results and errors are sealed in the store, and a
    // keyless client is refused (sealed-values.int.spec.ts).
    // It writes with k1, which every worker here holds, and reads k2 too.
    client = new Client({ transport, store, payloadProtection: protect(`${K1},${K2}`, `${S1},${S2}`) });
  });
  afterEach(() => {
    events = [];
  });

  async function startWorker(payloadProtection: PayloadProtection): Promise<Worker> {
    const worker = new Worker({
      transport,
      store,
      workflows: [secretLength],
      leaseMs: 3_000,
      reapIntervalMs: 100,
      fetchWaitMs: 200,
      inProcessWaitMs: 0,
      drainTimeoutMs: 2_000,
      unreadableRetryMs: 300,
      payloadProtection,
      onEvent: (event) => events.push(event),
    });
    await worker.start();
    workers.push(worker);
    return worker;
  }

  async function stopWorkers(): Promise<void> {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  }

  /** Starts a run on a worker with `protection` and returns once it is suspended after `reveal`. */
  async function suspendedRun(protection: PayloadProtection): Promise<string> {
    await startWorker(protection);
    const { runId } = await client.start(secretLength, null);
    await until(async () => (await store.runs.get(runId))?.status === 'suspended', `${runId} to suspend`);
    await stopWorkers();
    return runId;
  }

  const stepKey = (runId: string, seq: number): string => `${runId}:${seq}`;

  /** The key ids named by the frames of a run's journal records. */
  async function frameKeyIds(runId: string): Promise<Set<string>> {
    const records = await ns.journal.journal.read(runId, 0);
    return new Set(
      records.map((r) => {
        expect(r.data[0]).toBe(FRAME_MAGIC);
        return Buffer.from(r.data.subarray(4, 4 + r.data[3]!)).toString('latin1');
      }),
    );
  }

  /** Overwrites the run's latest checkpoint through the store's own fenced write (a store-side edit). */
  async function replaceCheckpoint(runId: string, edit: (cp: ProtectedCheckpoint) => ProtectedCheckpoint) {
    const stored = (await store.checkpoints.load(runId)) as ProtectedCheckpoint;
    const lease = await store.leases.get(runId);
    const edited = edit({ ...stored, epoch: lease!.epoch });
    await store.checkpoints.write(edited);
    return edited;
  }

  it('completes protected runs; neither the bus nor the store holds an activity result in the clear', async () => {
    const runId = await suspendedRun(BEFORE);
    await startWorker(BEFORE);
    await client.signal(runId, 'go');
    const expected = `${MARKER}:${stepKey(runId, REVEAL)}`.length;
    expect(await client.result(runId, { timeoutMs: 20_000 })).toBe(expected);

    const records = await ns.journal.journal.read(runId, 0);
    expect(records.length).toBeGreaterThan(2);
    for (const r of records) expect(Buffer.from(r.data).includes(MARKER)).toBe(false);
    const checkpoint = (await store.checkpoints.load(runId)) as ProtectedCheckpoint;
    expect(checkpoint).toMatchObject({ status: 'completed', entries: [], signature: { keyId: 's1' } });
    expect(checkpoint.sealedEntries).toEqual(expect.any(String));
    expect(checkpoint.chainHead).toEqual(expect.any(String));
    const stored = JSON.stringify([
      checkpoint,
      await store.runs.get(runId),
      await store.checkpoints.list(runId),
    ]);
    expect(stored).not.toContain(MARKER);
    // The check above can see plaintext: with the keys, the history holds the marker.
    const reader = new Client({ transport, store, payloadProtection: BEFORE });
    expect(JSON.stringify(await reader.history(runId))).toContain(MARKER);
    expect(executed(stepKey(runId, REVEAL))).toBe(1);
    expect(executed(stepKey(runId, MEASURE))).toBe(1);
  });

  it('resumes a run written under k1/s1 on a worker writing with k2/s2 that keeps k1 and s1', async () => {
    const runId = await suspendedRun(BEFORE);
    expect(await frameKeyIds(runId)).toEqual(new Set(['k1']));
    await startWorker(ROTATED);
    await client.signal(runId, 'go');
    expect(await client.result(runId, { timeoutMs: 20_000 })).toBeGreaterThan(MARKER.length);
    expect(await frameKeyIds(runId)).toEqual(new Set(['k1', 'k2']));
    expect(await store.checkpoints.load(runId)).toMatchObject({ signature: { keyId: 's2' } });
    expect(executed(stepKey(runId, REVEAL))).toBe(1);
  });

  it('fails a run whose journal holds a replayed record, naming the run and the entry, and re-executes nothing', async () => {
    const runId = await suspendedRun(BEFORE);
    // An authentic record (the first activity's result), appended again at the end of the journal.
    // (A replayed marker record of a later owner would pass: it carries no link and changes nothing
    // on replay. A first owner's record starts with its linked LeaseAcquired: that fails first.)
    const history = await new Client({ transport, store, payloadProtection: BEFORE }).history(runId);
    const completed = history.find((p) => p.entry.type === 'ActivityCompleted')!;
    const replayed = (await ns.journal.journal.read(runId, 0)).find((r) => r.position === completed.position);
    await ns.journal.journal.append({ runId, data: replayed!.data });
    await startWorker(BEFORE);
    await client.signal(runId, 'go');
    await until(async () => (await store.runs.get(runId))?.status === 'failed', `${runId} to fail`);
    // The store keeps the error sealed, its name and code in the clear; the client opens it.
    expect((await store.runs.get(runId))?.error).toMatchObject({
      name: 'CheckpointIntegrityError',
      code: 'BATON_INTEGRITY',
      message: 'protected (key k1)',
    });
    const run = await client.describe(runId);
    expect(run?.error).toMatchObject({ name: 'CheckpointIntegrityError', code: 'BATON_INTEGRITY' });
    expect(run?.error?.message).toMatch(
      new RegExp(
        `^run ${runId}: journal after checkpoint \\d+: journal entry #\\d+ \\((LeaseAcquired|ActivityCompleted of step #0), journal position \\d+\\) failed verification`,
      ),
    );
    expect(executed(stepKey(runId, REVEAL))).toBe(1);
    expect(executed(stepKey(runId, MEASURE))).toBe(0);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'dead-lettered',
        code: 'integrity',
        reason: expect.stringContaining(runId),
      }),
    );
    await expect(client.result(runId, { timeoutMs: 1_000 })).rejects.toThrow(/failed verification/);
  });

  it('fails a run whose checkpoint was edited in the store, naming the run and the checkpoint', async () => {
    const runId = await suspendedRun(BEFORE);
    // Move the journal position back, keeping the signature: the resume would re-read old records.
    const edited = await replaceCheckpoint(runId, (cp) => ({ ...cp, journalPosition: 0 }));
    await startWorker(BEFORE);
    await client.signal(runId, 'go');
    await until(async () => (await store.runs.get(runId))?.status === 'failed', `${runId} to fail`);
    const run = await client.describe(runId);
    expect(run?.error).toMatchObject({ name: 'CheckpointIntegrityError' });
    expect(run?.error?.message).toContain(
      `run ${runId}: checkpoint ${edited.seq} failed verification: its HMAC-SHA256 signature (key s1) does not match its content`,
    );
    expect(executed(stepKey(runId, REVEAL))).toBe(1);
    expect(executed(stepKey(runId, MEASURE))).toBe(0);
  });

  it('leaves a run intact when its key is missing, naming the key id, and resumes once the key is back', async () => {
    const runId = await suspendedRun(BEFORE);
    // k1 removed too early: this worker reads only k2.
    await startWorker(protect(K2, `${S2},${S1}`));
    await client.signal(runId, 'go');
    await until(() => events.some((e) => e.type === 'run-held' && e.runId === runId), `${runId} to be held`);
    expect(events.find((e) => e.type === 'run-held')).toMatchObject({
      code: 'BATON_MISSING_KEY',
      reason: expect.stringMatching(new RegExp(`^run ${runId}: .*encrypted with key k1, which is not in`)),
    });
    const held = await store.runs.get(runId);
    expect(held?.status).toBe('suspended');
    expect(held?.error).toBeUndefined();
    expect(executed(stepKey(runId, MEASURE))).toBe(0);
    await stopWorkers();
    // The operator puts k1 back: the run's retry timer brings it to a worker that can read it.
    await startWorker(ROTATED);
    expect(await client.result(runId, { timeoutMs: 20_000 })).toBeGreaterThan(MARKER.length);
    expect(executed(stepKey(runId, REVEAL))).toBe(1);
    expect(executed(stepKey(runId, MEASURE))).toBe(1);
  });

  it('leaves a run intact when its checkpoint has a newer schema version, naming the version', async () => {
    const runId = await suspendedRun(BEFORE);
    const future = CHECKPOINT_SCHEMA_VERSION + 1;
    const written = await replaceCheckpoint(runId, (cp) => ({
      ...cp,
      seq: cp.seq + 1,
      schemaVersion: future,
    }));
    await startWorker(BEFORE);
    await client.signal(runId, 'go');
    await until(() => events.some((e) => e.type === 'run-held' && e.runId === runId), `${runId} to be held`);
    expect(events.find((e) => e.type === 'run-held')).toMatchObject({
      code: 'BATON_CHECKPOINT_SCHEMA',
      reason: expect.stringContaining(
        `run ${runId}: checkpoint ${written.seq} has schema version ${future}, this worker reads up to version ${CHECKPOINT_SCHEMA_VERSION}`,
      ),
    });
    expect(await store.runs.get(runId)).toMatchObject({ status: 'suspended' });
    expect(await store.checkpoints.load(runId)).toEqual(written);
    expect(executed(stepKey(runId, MEASURE))).toBe(0);
  });
});
