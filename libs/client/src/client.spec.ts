import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  decodeMessage,
  defineWorkflow,
  encodeEntries,
  memoryStore,
  memoryTransport,
  runIdForKey,
  TimeoutError,
  WorkflowFailedError,
  type Delivery,
} from '@baton/core';
import { Client } from './index.js';

const wf = defineWorkflow({ name: 'orders', version: 2, run: async () => null });

async function drain(transport: ReturnType<typeof memoryTransport>): Promise<Delivery[]> {
  return transport.fetch({ max: 100, expiresMs: 50 });
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

  it('refuses invalid run ids and calls that need a store, naming the fix', async () => {
    const client = new Client({ transport: memoryTransport() });
    await expect(client.start(wf, null, { runId: 'has spaces' })).rejects.toThrow(
      /run id 'has spaces' is invalid/,
    );
    await expect(client.result('r1')).rejects.toThrow(ConfigError);
    await expect(client.describe('r1')).rejects.toThrow(/create the Client with \{ transport, store \}/);
    expect(() => new Client({} as never)).toThrow(/Client needs a transport/);
  });

  it('result() returns the outcome the store records, and times out naming the status', async () => {
    const transport = memoryTransport();
    const store = memoryStore();
    const client = new Client({ transport, store });
    await store.createRun({ runId: 'ok', workflow: 'orders', version: 2, input: null, idempotencyKey: null });
    await store.createRun({
      runId: 'bad',
      workflow: 'orders',
      version: 2,
      input: null,
      idempotencyKey: null,
    });
    const ok = await store.acquireLease('ok', 'w', 5_000);
    const bad = await store.acquireLease('bad', 'w', 5_000);
    if (!ok.ok || !bad.ok) throw new Error('lease');

    const waiting = client.result('ok', { timeoutMs: 2_000 });
    await store.finishRun('ok', ok.epoch, { status: 'completed', result: { total: 3 } });
    expect(await waiting).toEqual({ total: 3 });

    await store.finishRun('bad', bad.epoch, { status: 'failed', error: { name: 'Error', message: 'boom' } });
    await expect(client.result('bad')).rejects.toBeInstanceOf(WorkflowFailedError);
    await expect(client.result('never', { timeoutMs: 50 })).rejects.toThrow(TimeoutError);
    await expect(client.result('never', { timeoutMs: 50 })).rejects.toThrow(/status: not started/);
    expect((await client.describe('ok')).lease).toMatchObject({ state: 'finished' });
  });

  it('history() decodes the journal in order', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport });
    await transport.append({
      runId: 'r',
      data: encodeEntries([{ type: 'LeaseAcquired', epoch: 1, at: 0, workerId: 'w' }]),
    });
    await transport.append({
      runId: 'r',
      data: encodeEntries([{ type: 'RunCompleted', epoch: 1, at: 1, result: 5 }]),
    });
    const history = await client.history('r');
    expect(history.map((p) => p.entry.type)).toEqual(['LeaseAcquired', 'RunCompleted']);
    expect(history[0]!.position).toBeLessThan(history[1]!.position);
  });
});
