/**
 * Large payloads by reference on the real adapters (NATS + Redis, NATS + Postgres, Kafka + Redis),
 * with real Workers in this process and the default threshold (64 KiB):
 * - a run input, an activity result, a signal payload and a run result above it travel as SHA-256
 *   references: every journal record and checkpoint stays small, the bytes are in the store;
 * - workflow code sees the values, also after a resume on another worker, and the large step is
 *   not executed again; client.history() gives the values back;
 * - a payload gone from the store fails the run on resume with CheckpointIntegrityError naming
 *   the run and the step, and nothing is executed again from it;
 * - with a JetStream object store as the location (NATS + Redis), the bytes are there and not in
 *   the store, and client.runs.delete removes them with the run.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { Store, Transport } from '@baton/core/adapter';
import {
  decodeJournalRecord,
  IDENTITY_PAYLOAD_CODEC,
  type JournalEntry,
  type PayloadRef,
} from '@baton/core/runtime';
import { sha256Of } from '@baton/testing';
import { natsTestUrl } from '@baton/testing/servers';
import { natsObjectPayloadStore, type NatsObjectPayloadStore } from '@baton/transport-nats';
import { Worker, type WorkerEvent } from '@baton/worker';
import { inProcessNamespace, IN_PROCESS_PAIRS } from './in-process.spec-helper.js';

/** Length of the big activity result: well above the 64 KiB threshold. */
const BIG = 150_000;
/** No journal record or checkpoint of these runs may come near a large value. */
const SMALL_RECORD_BYTES = 4_096;
const SMALL_CHECKPOINT_BYTES = 16_384;

/** Executions per idempotency key: the outside world's view of side effects. */
const executions = new Map<string, number>();
const executed = (key: string): number => executions.get(key) ?? 0;
const record = (key: string): void => void executions.set(key, executed(key) + 1);

const makeBig = defineActivity({
  name: 'lp_make_big',
  run: async (seed: string, io) => (record(io.idempotencyKey), `${seed}:`.padEnd(BIG, 'x')),
});
const measure = defineActivity({
  name: 'lp_measure',
  run: async (text: string, io) => (record(io.idempotencyKey), text.length),
});
interface FlowInput {
  seed: string;
  pad: string;
}
/** Steps: makeBig #0, waitForSignal #1, measure #2; the result is large too. */
const flow = defineWorkflow({
  name: 'lp_flow',
  version: 1,
  run: async (ctx, input: FlowInput) => {
    const big = await ctx.run(makeBig, input.seed);
    const extra = await ctx.waitForSignal<string>('more');
    const length = await ctx.run(measure, big + extra);
    return { length, head: big.slice(0, input.seed.length), echo: input.pad + extra };
  },
});
const MAKE_BIG = 0;
const MEASURE = 2;

const refOf = (entry: JournalEntry | undefined): PayloadRef | undefined =>
  (entry as { resultRef?: PayloadRef; payloadRef?: PayloadRef } | undefined)?.resultRef ??
  (entry as { payloadRef?: PayloadRef } | undefined)?.payloadRef;

describe.each(IN_PROCESS_PAIRS)('large payloads on $name', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'lp');
  const workers = ns.workers;
  let transport: Transport;
  let store: Store;
  let client: Client;
  const events: WorkerEvent[] = [];
  beforeAll(() => {
    ({ transport, store, client } = ns);
  });

  async function startWorker(): Promise<Worker> {
    const worker = new Worker({
      transport,
      store,
      workflows: [flow],
      leaseMs: 3_000,
      reapIntervalMs: 100,
      fetchWaitMs: 200,
      inProcessWaitMs: 0,
      drainTimeoutMs: 2_000,
      onEvent: (event) => events.push(event),
    });
    await worker.start();
    workers.push(worker);
    return worker;
  }

  async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Starts a run on a first worker and returns once it is suspended after the big step, that worker stopped. */
  async function suspendedRun(input: FlowInput): Promise<string> {
    await startWorker();
    const { runId } = await client.start(flow, input);
    await until(async () => (await store.runs.get(runId))?.status === 'suspended', `${runId} to suspend`);
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    return runId;
  }

  /** The run's journal as written (references unresolved); every record must be small. */
  async function rawJournal(runId: string): Promise<JournalEntry[]> {
    const records = await ns.journal.journal.read(runId, 0);
    for (const r of records) expect(r.data.byteLength).toBeLessThan(SMALL_RECORD_BYTES);
    return records.flatMap((r) => decodeJournalRecord(r.data, runId, IDENTITY_PAYLOAD_CODEC, r.position));
  }

  /** The reference's bytes are in the store under the run and match their hash. */
  async function expectStored(runId: string, ref: PayloadRef | undefined): Promise<void> {
    expect(ref).toMatchObject({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), run: runId });
    const bytes = await store.payloads.get(runId, ref!.sha256);
    expect(bytes?.byteLength).toBe(ref!.size);
    expect(sha256Of(bytes!)).toBe(ref!.sha256);
  }

  it('carries input, activity result, signal payload and run result by reference; code sees the values', async () => {
    const seed = `seed-${randomBytes(4).toString('hex')}`;
    const input: FlowInput = { seed, pad: 'p'.repeat(100_000) };
    const runId = await suspendedRun(input);

    // Suspended after the big step: the journal and the checkpoints hold its hash, not its value.
    const completed = (await rawJournal(runId)).find((e) => e.type === 'ActivityCompleted');
    expect(completed).toMatchObject({ seq: MAKE_BIG, name: 'lp_make_big' });
    expect(completed).not.toHaveProperty('result');
    await expectStored(runId, refOf(completed));
    const checkpoint = await store.checkpoints.load(runId);
    // Layout 2: a worker that knows only layout 1 leaves this run alone instead of misreading it.
    expect(checkpoint?.schemaVersion).toBe(2);
    expect(refOf(checkpoint?.entries.find((e) => e.type === 'ActivityCompleted'))).toEqual(refOf(completed));
    for (const summary of await store.checkpoints.list(runId))
      expect(summary.size).toBeLessThan(SMALL_CHECKPOINT_BYTES);
    // The input went by reference in the start message; the run record holds the value.
    expect(
      await store.payloads.get(runId, sha256Of(new TextEncoder().encode(JSON.stringify(input)))),
    ).toBeDefined();
    expect((await store.runs.get(runId))?.input).toEqual(input);

    // Another worker resumes it: the big result is read back for the replay, not computed again.
    await startWorker();
    const extra = 'm'.repeat(120_000);
    await client.signal(runId, 'more', extra);
    await expect(client.result(runId, { timeoutMs: 20_000 })).resolves.toEqual({
      length: BIG + extra.length,
      head: seed,
      echo: input.pad + extra,
    });
    expect(executed(`${runId}:${MAKE_BIG}`)).toBe(1);
    expect(executed(`${runId}:${MEASURE}`)).toBe(1);

    const journal = await rawJournal(runId);
    await expectStored(runId, refOf(journal.find((e) => e.type === 'SignalReceived')));
    await expectStored(runId, refOf(journal.find((e) => e.type === 'RunCompleted')));
    for (const summary of await store.checkpoints.list(runId))
      expect(summary.size).toBeLessThan(SMALL_CHECKPOINT_BYTES);

    // The client's history reads the values back, verified.
    const history = await client.history(runId);
    const big = history.find((p) => p.entry.type === 'ActivityCompleted')?.entry as { result?: string };
    expect(big.result).toHaveLength(BIG);
    expect(big.result?.startsWith(`${seed}:`)).toBe(true);
    const signal = history.find((p) => p.entry.type === 'SignalReceived')?.entry as { payload?: string };
    expect(signal.payload).toBe(extra);
  }, 60_000);

  it("forks a run from a checkpoint holding references: the fork has its own copies and outlives the original's delete", async () => {
    const runId = await suspendedRun({ seed: `fork-${randomBytes(4).toString('hex')}`, pad: '' });
    await startWorker();
    await client.signal(runId, 'more', 'x');
    await client.result(runId, { timeoutMs: 20_000 });
    const afterBig = (await client.timeTravel.checkpoints(runId)).find((c) => c.status === 'suspended')!;
    const fork = await client.timeTravel.fork(runId, { fromCheckpoint: afterBig.seq });
    await client.runs.delete(runId);
    expect(await store.runs.get(runId)).toBeUndefined();
    await client.signal(fork.runId, 'more', 'y');
    await expect(fork.result({ timeoutMs: 20_000 })).resolves.toMatchObject({ length: BIG + 1 });
    // The big step replayed from the copied payload in the fork; it ran once, for the original.
    expect(executed(`${fork.runId}:${MAKE_BIG}`)).toBe(0);
    expect(executed(`${runId}:${MAKE_BIG}`)).toBe(1);
    const seed = (await store.checkpoints.load(fork.runId, 1))?.entries.find(
      (e) => e.type === 'ActivityCompleted',
    );
    await expectStored(fork.runId, refOf(seed) && { ...refOf(seed)!, run: fork.runId });
  }, 60_000);

  it('fails a run whose payload is gone from the store, naming the run and the step, and re-executes nothing', async () => {
    const runId = await suspendedRun({ seed: `gone-${randomBytes(4).toString('hex')}`, pad: '' });
    const ref = refOf((await rawJournal(runId)).find((e) => e.type === 'ActivityCompleted'));
    await store.payloads.delete([runId]);
    await startWorker();
    await client.signal(runId, 'more', 'small');
    await until(async () => (await store.runs.get(runId))?.status === 'failed', `${runId} to fail`);
    const run = await store.runs.get(runId);
    expect(run?.error).toMatchObject({ name: 'CheckpointIntegrityError', code: 'BATON_INTEGRITY' });
    expect(run?.error?.message).toContain(
      `run ${runId}: ActivityCompleted entry of step ${MAKE_BIG} failed verification: its large payload ` +
        `${ref!.sha256.slice(0, 16)} (${ref!.size} bytes, in ${store.payloads.location}) is missing`,
    );
    expect(executed(`${runId}:${MAKE_BIG}`)).toBe(1);
    expect(executed(`${runId}:${MEASURE}`)).toBe(0);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'dead-lettered',
        code: 'integrity',
        reason: expect.stringContaining(runId),
      }),
    );
  }, 60_000);
});

describe('large payloads in a JetStream object store on nats+redis', () => {
  const ns = inProcessNamespace(IN_PROCESS_PAIRS[0]!.factory, 'lpo');
  const bucket = `T${randomBytes(5).toString('hex')}_PAYLOADS`;
  let objects: NatsObjectPayloadStore;
  let client: Client;
  beforeAll(async () => {
    objects = natsObjectPayloadStore({ servers: natsTestUrl(), bucket, storage: 'memory' });
    await objects.connect();
    client = new Client({ transport: ns.transport, store: ns.store, largePayloads: { payloads: objects } });
  });
  afterAll(async () => {
    await objects?.close();
    const nc = await connect({ servers: natsTestUrl() });
    try {
      await (await jetstreamManager(nc)).streams.delete(`OBJ_${bucket}`).catch(() => undefined);
    } finally {
      await nc.close();
    }
  });

  it('keeps the bytes in the object store, not the store, and client.runs.delete removes them', async () => {
    const worker = new Worker({
      transport: ns.transport,
      store: ns.store,
      workflows: [flow],
      fetchWaitMs: 200,
      inProcessWaitMs: 0,
      largePayloads: { payloads: objects },
    });
    ns.workers.push(worker);
    await worker.start();
    const input: FlowInput = { seed: `obj-${randomBytes(4).toString('hex')}`, pad: 'q'.repeat(90_000) };
    const { runId } = await client.start(flow, input);
    const extra = 'n'.repeat(70_000);
    await client.signal(runId, 'more', extra);
    await expect(client.result(runId, { timeoutMs: 20_000 })).resolves.toMatchObject({
      length: BIG + extra.length,
      echo: input.pad + extra,
    });

    const records = await ns.journal.journal.read(runId, 0);
    const journal = records.flatMap((r) =>
      decodeJournalRecord(r.data, runId, IDENTITY_PAYLOAD_CODEC, r.position),
    );
    const refs = journal.map(refOf).filter((ref): ref is PayloadRef => ref !== undefined);
    // The big result, the signal payload and the run result.
    expect(refs).toHaveLength(3);
    for (const ref of refs) {
      expect(sha256Of((await objects.get(runId, ref.sha256))!)).toBe(ref.sha256);
      expect(await ns.store.payloads.get(runId, ref.sha256)).toBeUndefined();
    }
    expect(await client.runs.delete(runId)).toMatchObject({ runId, journal: 'purged' });
    for (const ref of refs) expect(await objects.get(runId, ref.sha256)).toBeUndefined();
  }, 60_000);
});
