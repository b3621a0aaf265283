/**
 * The worker's side of payload protection, on memory adapters (the logic; the real adapters are
 * covered by tests/system/src/integrity.int.spec.ts): protected runs complete, tampered data fails
 * the run, a missing key or a newer checkpoint schema leaves it intact.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import {
  CHECKPOINT_SCHEMA_VERSION,
  resolvePayloadProtection,
  sealValue,
  sendRunMessage,
  wakeMessage,
  type PayloadProtection,
} from '@baton/core/runtime';
import { Client } from '@baton/client';
import { fleet, Ledger, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const key = (id: string): string => `${id}:${randomBytes(32).toString('base64')}`;
const k1 = key('k1');
const s1 = key('s1');
const protection = (encryptionKeys: string, signingKeys = s1): PayloadProtection =>
  resolvePayloadProtection({ encryptionKeys, signingKeys });

function secretWorkflow(ledger: Ledger) {
  const reveal = defineActivity({
    name: 'reveal',
    run: async (_: null, io) => (ledger.record(io.idempotencyKey), 'SECRET-MARKER-42'),
  });
  const measure = defineActivity({
    name: 'measure',
    run: async (text: string, io) => (ledger.record(io.idempotencyKey), text.length),
  });
  return defineWorkflow({
    name: 'secret',
    version: 1,
    run: async (ctx) => {
      const text = await ctx.run(reveal, null);
      await ctx.waitForSignal('go');
      return ctx.run(measure, text);
    },
  });
}

/** A fleet of one protected worker with a run suspended after its first activity. */
async function suspendedRun(with1: PayloadProtection) {
  const ledger = new Ledger();
  const workflow = secretWorkflow(ledger);
  // The fleet's client has the keys too: a keyless one is refused (sealed-values.int.spec.ts).
  current = fleet({ workflows: [workflow], unreadableRetryMs: 200, payloadProtection: with1 });
  const first = await current.spawn({ payloadProtection: with1 });
  const run = await current.client.start(workflow, null);
  await until(async () => (await current!.store.runs.get(run.runId))?.status === 'suspended');
  await first.worker.stop();
  return { ledger, run, f: current };
}

describe('payload protection in the worker (memory adapters)', () => {
  it('completes protected runs; history decodes only with the same protection', async () => {
    const p = protection(k1);
    const { run, f } = await suspendedRun(p);
    await f.spawn({ payloadProtection: p });
    await f.client.signal(run.runId, 'go');
    expect(await run.result({ timeoutMs: 5_000 })).toBe('SECRET-MARKER-42'.length);
    const records = await f.journal.journal.read(run.runId, 0);
    expect(records.some((r) => Buffer.from(r.data).includes('SECRET-MARKER'))).toBe(false);
    const checkpoint = await f.store.checkpoints.load(run.runId);
    expect(JSON.stringify(checkpoint)).not.toContain('SECRET-MARKER');
    expect(checkpoint).toMatchObject({ signature: { keyId: 's1' }, entries: [] });
    const reader = new Client({ transport: f.transport, store: f.store, payloadProtection: p });
    const history = await reader.history(run.runId);
    expect(JSON.stringify(history)).toContain('SECRET-MARKER-42');
    await expect(new Client({ transport: f.transport, store: f.store }).history(run.runId)).rejects.toThrow(
      /encrypted with key k1 but no encryption key is configured/,
    );
  });

  it('fails a run whose journal was tampered with, naming run and entry, and runs nothing more', async () => {
    const p = protection(k1);
    const { ledger, run, f } = await suspendedRun(p);
    const records = await f.journal.journal.read(run.runId, 0);
    // Replay the first record (the first activity's result) at the end of the journal.
    await f.journal.journal.append({ runId: run.runId, data: records[0]!.data });
    const b = await f.spawn({ payloadProtection: p });
    await f.client.signal(run.runId, 'go');
    await expect(run.result({ timeoutMs: 5_000 })).rejects.toThrow(
      new RegExp(
        `run ${run.runId}: journal after checkpoint \\d+: journal entry #\\d+ .*failed verification`,
      ),
    );
    expect(await f.store.runs.get(run.runId)).toMatchObject({
      status: 'failed',
      error: { name: 'CheckpointIntegrityError', code: 'BATON_INTEGRITY' },
    });
    expect(ledger.count(`${run.runId}:0`)).toBe(1);
    expect(ledger.count(`${run.runId}:2`)).toBe(0);
    expect(b.events).toContainEqual(expect.objectContaining({ type: 'dead-lettered', code: 'integrity' }));
  });

  it('leaves a run intact when a key is missing, and resumes it once the key is back', async () => {
    const { ledger, run, f } = await suspendedRun(protection(k1));
    const k2 = key('k2');
    const lines: Array<{ level: string; obj: object; msg?: string }> = [];
    const record =
      (level: string) =>
      (obj: object, msg?: string): void =>
        void lines.push({ level, obj, msg });
    const logger = {
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    };
    const lacking = await f.spawn({ payloadProtection: protection(k2), logger });
    await f.client.signal(run.runId, 'go');
    await until(() => lacking.events.some((e) => e.type === 'run-held'), 5_000, 'the run to be held');
    const held = lacking.events.find((e) => e.type === 'run-held');
    expect(held).toMatchObject({ code: 'BATON_MISSING_KEY', reason: expect.stringMatching(/key k1/) });
    // The error log names the run and the key id, and no log line holds key material.
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        obj: expect.objectContaining({ runId: run.runId, keyId: 'k1', code: 'BATON_MISSING_KEY' }),
        msg: expect.stringMatching(/^run left intact: run .*encrypted with key k1, which is not in/),
      }),
    );
    const logged = JSON.stringify(lines);
    for (const secret of [k1, k2, s1].map((spec) => spec.slice(3))) expect(logged).not.toContain(secret);
    expect(await f.store.runs.get(run.runId)).toMatchObject({ status: 'suspended' });
    await lacking.worker.stop();
    await f.spawn({ payloadProtection: protection(`${k2},${k1}`) });
    // The result is sealed with k2 now, so it is read by a client that holds k2.
    const reader = new Client({
      transport: f.transport,
      store: f.store,
      payloadProtection: protection(`${k2},${k1}`),
    });
    expect(await reader.result(run.runId, { timeoutMs: 5_000 })).toBe(16);
    expect(ledger.count(`${run.runId}:0`)).toBe(1);
  });

  it('leaves a run intact when a signal payload in its inbox names a key it lacks, and completes it once the key is there', async () => {
    const p = protection(k1);
    const k2 = key('k2');
    const { ledger, run, f } = await suspendedRun(p);
    const worker = await f.spawn({ payloadProtection: p });
    // A payload sealed with k2, which this worker lacks, put in the inbox as a worker with k2 would.
    const sealed = sealValue({ ok: true }, run.runId, 'signal payload', protection(k2));
    const delivered = await f.store.signals.deliver(run.runId, {
      signalId: 'g1',
      name: 'go',
      payload: sealed,
    });
    expect(delivered.found).toBe(true);
    await sendRunMessage(f.transport.runQueue, wakeMessage(run.runId, 'signal'));
    await until(() => worker.events.some((e) => e.type === 'run-held'), 5_000, 'the run to be held');
    expect(worker.events.find((e) => e.type === 'run-held')).toMatchObject({
      code: 'BATON_MISSING_KEY',
      reason: expect.stringMatching(/signal payload of run .* encrypted with key k2/),
    });
    expect(await f.store.runs.get(run.runId)).toMatchObject({ status: 'suspended' });
    expect(ledger.count(`${run.runId}:2`)).toBe(0);
    await worker.worker.stop();

    // With k2 as well it completes, once.
    const both = protection(`${k1},${k2}`);
    await f.spawn({ payloadProtection: both });
    const reader = new Client({ transport: f.transport, store: f.store, payloadProtection: both });
    expect(await reader.result(run.runId, { timeoutMs: 5_000 })).toBe(16);
    expect(ledger.count(`${run.runId}:2`)).toBe(1);
  });

  it('leaves a run intact when its checkpoint has a newer schema version', async () => {
    const p = protection(k1);
    const { run, f } = await suspendedRun(p);
    const stored = (await f.store.checkpoints.load(run.runId))!;
    const lease = (await f.store.leases.get(run.runId))!;
    const future = { ...stored, seq: stored.seq + 1, schemaVersion: CHECKPOINT_SCHEMA_VERSION + 1 };
    await f.store.checkpoints.write({ ...future, epoch: lease.epoch });
    const b = await f.spawn({ payloadProtection: p });
    await f.client.signal(run.runId, 'go');
    await until(() => b.events.some((e) => e.type === 'run-held'), 5_000, 'the run to be held');
    expect(b.events.find((e) => e.type === 'run-held')).toMatchObject({
      code: 'BATON_CHECKPOINT_SCHEMA',
      reason: expect.stringContaining(
        `run ${run.runId}: checkpoint ${future.seq} has schema version ${CHECKPOINT_SCHEMA_VERSION + 1}`,
      ),
    });
    expect(await f.store.runs.get(run.runId)).toMatchObject({ status: 'suspended' });
    expect(await f.store.checkpoints.load(run.runId)).toMatchObject({
      schemaVersion: CHECKPOINT_SCHEMA_VERSION + 1,
    });
  });
});
