/**
 * Sealed values on the real adapters (NATS + Redis, NATS + Postgres, Kafka + Redis), with real
 * Worker instances that encrypt and refuse plaintext (docs/integrity.md, "Values outside the
 * journal"):
 * - a run's input (inline and by reference), its result and error, and signal payloads on the bus
 *   and in the store's inbox are sealed: no secret is in the clear, and a client with the key
 *   reads every one of them back;
 * - a client without the key reads sealed values as "protected (key k1)" and is refused at
 *   start() and signal(), naming the key, before anything is sent;
 * - a producer that only has the bus (no store to read the fleet from) and no key gets the same
 *   outcome whatever the size of its input: the start is dead-lettered `unprotected-payload`;
 * - a schedule's input is sealed in the store, and each run it fires gets it sealed for itself;
 * - a run whose record holds its input in the clear (written before sealing existed) still runs.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client, MissingKeyError, WorkflowFailedError } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { RunRecord, Store, Transport } from '@baton/core/adapter';
import {
  resolvePayloadProtection,
  resumeMessage,
  sendRunMessage,
  type PayloadProtection,
} from '@baton/core/runtime';
import { Worker } from '@baton/worker';
import { inProcessNamespace, IN_PROCESS_PAIRS, until } from './in-process.spec-helper.js';

/** Must never appear in the clear on the bus or in the store. */
const MARKER = `sealed-marker-${randomBytes(6).toString('hex')}`;
const K1 = `k1:${randomBytes(32).toString('base64')}`;
const FLEET: PayloadProtection = resolvePayloadProtection({ encryptionKeys: K1 }, {});
/** Above the claim check's default threshold (64 KiB): the input goes by reference. */
const LARGE = `${MARKER}:${'L'.repeat(100 * 1024)}`;

interface Order {
  card: string;
  fail?: boolean;
}

const charge = defineActivity({
  name: 'sv_charge',
  run: async (order: Order) => `charged ${order.card.length}`,
});
/** Waits for `approve` (payload holds a secret), then returns or throws something holding the secret. */
const checkout = defineWorkflow({
  name: 'sv_checkout',
  version: 1,
  run: async (ctx, order: Order) => {
    const receipt = await ctx.run(charge, order);
    const approval = await ctx.waitForSignal<{ by: string }>('approve');
    if (order.fail === true) throw new Error(`declined for ${order.card}`);
    return { receipt, approvedBy: approval.by, card: order.card };
  },
});

describe.each(IN_PROCESS_PAIRS)('sealed values on $name', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'sv');
  let transport: Transport;
  let store: Store;
  let keyed: Client;
  let keyless: Client;
  beforeAll(() => {
    ({ transport, store } = ns);
    keyed = new Client({ transport, store, payloadProtection: FLEET });
    keyless = new Client({ transport, store });
  });
  afterEach(async () => {
    await Promise.all(ns.workers.splice(0).map((w) => w.stop()));
  });

  async function startWorker(): Promise<Worker> {
    const worker = new Worker({
      transport,
      store,
      workflows: [checkout],
      leaseMs: 3_000,
      fetchWaitMs: 200,
      inProcessWaitMs: 0,
      drainTimeoutMs: 2_000,
      scheduleScanMs: 100,
      payloadProtection: FLEET,
    });
    await worker.start();
    ns.workers.push(worker);
    return worker;
  }

  const suspended = (runId: string) => async () => (await store.runs.get(runId))?.status === 'suspended';

  it('seals input, signal payloads, result and error on the bus and in the store; the keyed client reads them', async () => {
    // The start waits on the bus with no worker up: its bytes are sealed (codec version 3).
    const small = await keyed.start(checkout, { card: `${MARKER}:4111` });
    let [waiting] = await transport.runQueue.fetch({ max: 1, expiresMs: 2_000 });
    for (let i = 0; waiting === undefined && i < 20; i++)
      [waiting] = await transport.runQueue.fetch({ max: 1, expiresMs: 500 });
    const onBus = JSON.parse(Buffer.from(waiting!.data).toString()) as { v: number; input: unknown };
    expect(onBus.v).toBe(3);
    expect(onBus.input).toMatchObject({ '$baton.sealed': 1, key: 'k1' });
    expect(Buffer.from(waiting!.data).includes(MARKER)).toBe(false);
    await waiting!.nak(0);

    await startWorker();
    const large = await keyed.start(checkout, { card: LARGE });
    const failing = await keyed.start(checkout, { card: `${MARKER}:5500`, fail: true });
    for (const run of [small, large, failing]) await until(suspended(run.runId), `${run.runId} to wait`);
    // A signal nobody waits for stays in the inbox, sealed.
    await keyed.signal(small.runId, 'note', { text: `${MARKER}:note` });
    await until(async () => (await store.signals.read(small.runId)).length > 0, 'the note in the inbox');
    const inbox = await store.signals.read(small.runId);
    expect(inbox[0]!.payload).toMatchObject({ '$baton.sealed': 1, key: 'k1' });
    for (const run of [small, large, failing])
      await keyed.signal(run.runId, 'approve', { by: `${MARKER}:ops` });

    expect(await small.result({ timeoutMs: 20_000 })).toEqual({
      receipt: `charged ${MARKER.length + 5}`,
      approvedBy: `${MARKER}:ops`,
      card: `${MARKER}:4111`,
    });
    expect(await large.result({ timeoutMs: 20_000 })).toMatchObject({ card: LARGE });
    const failure = await failing.result({ timeoutMs: 20_000 }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as Error).message).toContain(`declined for ${MARKER}:5500`);

    // In the store: every value sealed, the error's name in the clear, no secret anywhere.
    for (const run of [small, large, failing]) {
      const stored = await store.runs.get(run.runId);
      expect(JSON.stringify(stored)).not.toContain(MARKER);
      expect(stored!.input).toMatchObject({ '$baton.sealed': 1, key: 'k1' });
    }
    expect((await store.runs.get(small.runId))!.result).toMatchObject({ '$baton.sealed': 1, key: 'k1' });
    expect((await store.runs.get(failing.runId))!.error).toMatchObject({
      name: 'Error',
      message: 'protected (key k1)',
    });
    // The keyed client's describe opens them.
    expect(await keyed.describe(failing.runId)).toMatchObject({
      input: { card: `${MARKER}:5500`, fail: true },
      error: { name: 'Error', message: `declined for ${MARKER}:5500` },
    });
  });

  it('shows a keyless client "protected (key k1)" and refuses its start and signal, naming the key, sending nothing', async () => {
    await startWorker();
    const run = await keyed.start(checkout, { card: `${MARKER}:6011`, fail: true });
    await until(suspended(run.runId), 'the run to wait');
    await keyed.signal(run.runId, 'approve', { by: 'ops' });
    await expect(run.result({ timeoutMs: 20_000 })).rejects.toThrow(WorkflowFailedError);
    const described = await keyless.describe(run.runId);
    expect(described.input).toMatchObject({ '$baton.sealed': 1, key: 'k1' });
    expect(JSON.stringify(described)).not.toContain(MARKER);
    // A failed run still says it failed, and what kind of error, without the details.
    await expect(keyless.result(run.runId, { timeoutMs: 5_000 })).rejects.toThrow(
      /failed: Error: protected \(key k1\)/,
    );

    const done = await keyed.start(checkout, { card: `${MARKER}:7` });
    await until(suspended(done.runId), 'the second run to wait');
    await keyed.signal(done.runId, 'approve', { by: 'ops' });
    await done.result({ timeoutMs: 20_000 });
    const unreadable = await keyless.result(done.runId, { timeoutMs: 5_000 }).catch((err: unknown) => err);
    expect(unreadable).toBeInstanceOf(MissingKeyError);
    expect(unreadable).toMatchObject({ keyId: 'k1' });

    const before = (await keyless.fleet.backlog()).total;
    await expect(keyless.start(checkout, { card: '1' })).rejects.toThrow(
      /the fleet requires encryption with key k1 .*Nothing was sent/,
    );
    await expect(keyless.signal(done.runId, 'approve', { by: 'x' })).rejects.toThrow(
      /the fleet requires encryption with key k1/,
    );
    expect((await keyless.fleet.backlog()).total).toBe(before);
  });

  it('dead-letters a keyless bus-only producer the same way whatever the size of its input', async () => {
    await startWorker();
    // Only the bus, and a payload store for large values: nothing to read the fleet from.
    const busOnly = new Client({ transport, largePayloads: { payloads: store.payloads } });
    const tiny = await busOnly.start(checkout, { card: '4111' });
    const big = await busOnly.start(checkout, { card: LARGE });
    const letters = async () =>
      (await keyed.deadLetters.list({ limit: 100 })).letters.filter((l) =>
        [tiny.runId, big.runId].includes(l.headers['baton-run-id'] ?? runIdIn(l.data) ?? ''),
      );
    await until(async () => (await letters()).length === 2, 'both starts to be dead-lettered');
    for (const letter of await letters()) {
      expect(letter.code).toBe('unprotected-payload');
      expect(letter.reason).toMatch(/requires encryption \(key k1\).*BATON_ENCRYPTION_KEYS/);
    }
    expect(await store.runs.get(tiny.runId)).toBeUndefined();
    expect(await store.runs.get(big.runId)).toBeUndefined();
  });

  it('seals a schedule input in the store, and each run it fires gets it sealed for itself', async () => {
    const scheduleId = `sv-${randomBytes(4).toString('hex')}`;
    await keyed.schedules.create(checkout, { card: `${MARKER}:sched` }, { scheduleId, every: '1s' });
    const stored = await store.schedules.get(scheduleId);
    expect(stored!.input).toMatchObject({ '$baton.sealed': 1, key: 'k1' });
    expect(JSON.stringify(stored)).not.toContain(MARKER);
    expect((await keyed.schedules.get(scheduleId)).input).toEqual({ card: `${MARKER}:sched` });
    expect((await keyless.schedules.get(scheduleId)).input).toMatchObject({ key: 'k1' });
    await startWorker();
    let fired: RunRecord | undefined;
    await until(async () => {
      const page = await store.runs.list({ idempotencyKeyPrefix: `schedule:${scheduleId}:`, limit: 1 });
      fired = page.runs[0];
      return fired !== undefined;
    }, 'the schedule to fire');
    await keyed.schedules.delete(scheduleId);
    const runId = fired!.runId;
    await until(suspended(runId), 'the fired run to wait');
    expect((await store.runs.get(runId))!.input).toMatchObject({ '$baton.sealed': 1 });
    await keyed.signal(runId, 'approve', { by: 'ops' });
    expect(await keyed.result(runId, { timeoutMs: 20_000 })).toMatchObject({ card: `${MARKER}:sched` });
  });

  it('runs a run whose record holds its input in the clear, as one written before sealing existed', async () => {
    const runId = `sv-plain-${randomBytes(4).toString('hex')}`;
    await store.runs.create({
      runId,
      workflow: 'sv_checkout',
      version: 1,
      input: { card: 'plain' },
      idempotencyKey: null,
    });
    await sendRunMessage(transport.runQueue, resumeMessage(runId, 'retry'));
    await startWorker();
    await until(suspended(runId), 'the old run to wait');
    await keyed.signal(runId, 'approve', { by: 'ops' });
    expect(await keyed.result(runId, { timeoutMs: 20_000 })).toMatchObject({
      card: 'plain',
      approvedBy: 'ops',
    });
  });
});

/** The run id a dead letter's raw message names. */
function runIdIn(data: Uint8Array): string | undefined {
  try {
    return (JSON.parse(Buffer.from(data).toString()) as { runId?: string }).runId;
  } catch {
    return undefined;
  }
}
