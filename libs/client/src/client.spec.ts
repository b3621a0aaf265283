import { describe, expect, it } from 'vitest';
import { ConfigError, defineWorkflow } from '@baton/core';
import type { Delivery } from '@baton/core/adapter';
import { decodeMessage, encodeEntries, runIdForKey } from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from './index.js';
import { RunDeletedError, TimeoutError, WorkflowFailedError } from './result-errors.js';

const wf = defineWorkflow({ name: 'orders', version: 2, run: async () => null });

async function drain(transport: ReturnType<typeof memoryTransport>): Promise<Delivery[]> {
  return transport.runQueue.fetch({ max: 100, expiresMs: 50 });
}

describe('Client', () => {
  it('starts, signals and cancels with only a transport', async () => {
    const transport = memoryTransport();
    const producer = new Client({ transport });
    const run = await producer.start(
      wf,
      { sku: 'A1' },
      { idempotencyKey: 'order-1', traceparent: '00-abc-def-01' },
    );
    await producer.signal(run.runId, 'paid', { cents: 500 }, { signalId: 'sig-1' });
    await producer.cancel(run.runId, 'customer changed their mind');

    const messages = (await drain(transport)).map((d) => decodeMessage(d.data));
    expect(messages).toEqual([
      expect.objectContaining({
        kind: 'start',
        runId: run.runId,
        workflow: 'orders',
        version: 2,
        input: { sku: 'A1' },
        idempotencyKey: 'order-1',
        traceparent: '00-abc-def-01',
      }),
      { kind: 'signal', runId: run.runId, name: 'paid', payload: { cents: 500 }, signalId: 'sig-1' },
      { kind: 'cancel', runId: run.runId, reason: 'customer changed their mind' },
    ]);
    expect(run.runId).toBe(runIdForKey('orders', 'order-1'));
  });

  it('sends one start message for two starts with the same idempotency key', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport });
    const a = await client.start(wf, 1, { idempotencyKey: 'k' });
    const b = await client.start(wf, 2, { idempotencyKey: 'k' });
    expect(b.runId).toBe(a.runId);
    expect(await drain(transport)).toHaveLength(1);
  });

  it('names the run an idempotency key starts before starting it, and refuses a key a worker would', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport });
    const expected = client.runIdForKey('orders', 'order-7');
    expect(client.runIdForKey(wf, 'order-7')).toBe(expected);
    expect(client.runIdForKey('billing', 'order-7')).not.toBe(expected);
    expect((await client.start(wf, null, { idempotencyKey: 'order-7' })).runId).toBe(expected);
    expect(() => client.runIdForKey('orders', '')).toThrow(
      expect.objectContaining({ code: 'BATON_INVALID_INPUT', field: 'idempotencyKey' }),
    );
    expect(() => client.runIdForKey('not a name!', 'k')).toThrow(
      expect.objectContaining({ code: 'BATON_INVALID_INPUT', field: 'workflow' }),
    );
  });

  it('refuses invalid run ids and calls that need a store, naming the fix', async () => {
    const client = new Client({ transport: memoryTransport() });
    await expect(client.start(wf, null, { runId: 'has spaces' })).rejects.toThrow(
      /runId must be 1-128 characters from letters, digits, '_' and '-' .*; found "has spaces"/,
    );
    await expect(client.result('r1')).rejects.toThrow(ConfigError);
    await expect(client.describe('r1')).rejects.toThrow(/create the Client with \{ transport, store \}/);
    expect(() => new Client({} as never)).toThrow(/Client needs a transport/);
  });

  it('result() returns the outcome the store records, and times out naming the status', async () => {
    const transport = memoryTransport();
    const store = memoryStore();
    const client = new Client({ transport, store });
    await store.runs.create({
      runId: 'ok',
      workflow: 'orders',
      version: 2,
      input: null,
      idempotencyKey: null,
    });
    await store.runs.create({
      runId: 'bad',
      workflow: 'orders',
      version: 2,
      input: null,
      idempotencyKey: null,
    });
    const ok = await store.leases.acquire('ok', 'w', 5_000);
    const bad = await store.leases.acquire('bad', 'w', 5_000);
    if (!ok.ok || !bad.ok) throw new Error('lease');

    const waiting = client.result('ok', { timeoutMs: 2_000 });
    await store.runs.finish('ok', ok.epoch, { status: 'completed', result: { total: 3 } });
    expect(await waiting).toEqual({ total: 3 });

    await store.runs.finish('bad', bad.epoch, {
      status: 'failed',
      error: { name: 'Error', message: 'boom' },
    });
    await expect(client.result('bad')).rejects.toBeInstanceOf(WorkflowFailedError);
    await expect(client.result('never', { timeoutMs: 50 })).rejects.toThrow(TimeoutError);
    await expect(client.result('never', { timeoutMs: 50 })).rejects.toThrow(/status: not started/);
    expect((await client.describe('ok')).lease).toMatchObject({ state: 'finished' });
  });

  it('result() of a run the retention sweep deleted fails at once naming it; an unknown run after unknownRunMs', async () => {
    let now = 1_700_000_000_000;
    const store = memoryStore({ clock: () => now });
    const client = new Client({ transport: memoryTransport(), store });
    await store.runs.create({
      runId: 'swept',
      workflow: 'orders',
      version: 2,
      input: null,
      idempotencyKey: null,
    });
    const lease = await store.leases.acquire('swept', 'w', 5_000);
    if (!lease.ok) throw new Error('lease');
    await store.runs.finish('swept', lease.epoch, { status: 'completed', result: 1 });
    now += 10_000;
    expect(await store.retention.deleteExpired(5_000, 10, 60_000)).toEqual(['swept']);

    // No timeout given: without the tombstone this would wait for good.
    const deleted = await client.result('swept').catch((err: unknown) => err);
    expect(deleted).toBeInstanceOf(RunDeletedError);
    expect(deleted).toMatchObject({ code: 'BATON_RUN_DELETED', runId: 'swept', deletedAt: now });
    expect((deleted as Error).message).toMatch(
      /run swept was deleted by the retention sweep at .*BATON_RETENTION_MS/,
    );

    await expect(client.result('never-started', { unknownRunMs: 30 })).rejects.toMatchObject({
      code: 'BATON_NOT_FOUND',
      message: expect.stringMatching(/run never-started is not known to the store after 30 ms.*unknownRunMs/),
    });
    // Once the tombstone's life is over, the run is merely unknown.
    now += 60_000;
    await expect(client.result('swept', { unknownRunMs: 0 })).rejects.toMatchObject({
      code: 'BATON_NOT_FOUND',
    });
  });

  it('a handle from start() waits for its run past unknownRunMs: the start message may still be queued', async () => {
    const store = memoryStore();
    const client = new Client({ transport: memoryTransport(), store, unknownRunMs: 20 });
    const handle = await client.start({ name: 'orders', version: 2 }, null, { runId: 'queued' });
    const waiting = handle.result({ timeoutMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await store.runs.create({
      runId: 'queued',
      workflow: 'orders',
      version: 2,
      input: null,
      idempotencyKey: null,
    });
    const lease = await store.leases.acquire('queued', 'w', 5_000);
    if (!lease.ok) throw new Error('lease');
    await store.runs.finish('queued', lease.epoch, { status: 'completed', result: 'late' });
    expect(await waiting).toBe('late');
    await expect(client.result('queued-never', { timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'BATON_NOT_FOUND',
    });
  });

  it('history() decodes the journal in order', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport });
    await transport.journal.append({
      runId: 'r',
      data: encodeEntries([{ type: 'LeaseAcquired', epoch: 1, at: 0, workerId: 'w' }]),
    });
    await transport.journal.append({
      runId: 'r',
      data: encodeEntries([{ type: 'RunCompleted', epoch: 1, at: 1, result: 5 }]),
    });
    const history = await client.history('r');
    expect(history.map((p) => p.entry.type)).toEqual(['LeaseAcquired', 'RunCompleted']);
    expect(history[0]!.position).toBeLessThan(history[1]!.position);
  });
});
