/**
 * client.runs.pause and client.runs.resume against the in-memory store and bus, with no worker:
 * what each answers for each state of a run, which message a resume sends, and the errors it raises.
 */
import { describe, expect, it } from 'vitest';
import type { Delivery } from '@baton/core/adapter';
import { decodeMessage } from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from './index.js';

function world() {
  const transport = memoryTransport();
  const store = memoryStore();
  return { transport, store, client: new Client({ transport, store }) };
}

async function drain(transport: ReturnType<typeof memoryTransport>): Promise<Delivery[]> {
  const deliveries = await transport.runQueue.fetch({ max: 100, expiresMs: 50 });
  for (const d of deliveries) await d.ack();
  return deliveries;
}

async function knownRun(store: ReturnType<typeof memoryStore>, runId: string): Promise<void> {
  await store.runs.create({ runId, workflow: 'orders', version: 1, input: null, idempotencyKey: null });
}

describe('client.runs.pause and client.runs.resume', () => {
  it('pauses a run nobody runs at once and sends nothing; resume sends one wake (reason resume)', async () => {
    const { transport, store, client } = world();
    await knownRun(store, 'run-1');
    expect(await client.runs.pause('run-1', 'audit')).toBe('paused');
    const described = await client.describe('run-1');
    expect(described.status).toBe('paused');
    expect(described.lease).toMatchObject({ state: 'paused', pauseReason: 'audit' });
    expect(await drain(transport)).toEqual([]);
    // Pausing again changes nothing.
    expect(await client.handle('run-1').pause()).toBe('paused');

    expect(await client.runs.resume('run-1')).toBe(true);
    expect((await drain(transport)).map((d) => decodeMessage(d.data))).toEqual([
      { kind: 'wake', runId: 'run-1', reason: 'resume' },
    ]);
    expect((await client.describe('run-1')).status).toBe('pending');
    // Nothing left to resume: false, and no message.
    expect(await client.runs.resume('run-1')).toBe(false);
    expect(await drain(transport)).toEqual([]);
  });

  it('asks a run a worker holds to pause, and resume withdraws the request without a message', async () => {
    const { transport, store, client } = world();
    await knownRun(store, 'run-2');
    await store.leases.acquire('run-2', 'worker-a', 60_000);
    expect(await client.runs.pause('run-2')).toBe('pause-requested');
    expect((await client.describe('run-2')).lease).toMatchObject({ state: 'held', pauseRequested: true });
    expect(await client.runs.resume('run-2')).toBe(true);
    expect((await client.describe('run-2')).lease?.pauseRequested).toBeUndefined();
    expect(await drain(transport)).toEqual([]);
  });

  it('refuses a finished run with RunStateError naming its status, and a run with a cancel pending', async () => {
    const { store, client } = world();
    await knownRun(store, 'run-3');
    const lease = await store.leases.acquire('run-3', 'worker-a', 60_000);
    if (!lease.ok) throw new Error('not acquired');
    await store.runs.finish('run-3', lease.epoch, { status: 'completed', result: 1 });
    await expect(client.runs.pause('run-3')).rejects.toMatchObject({
      name: 'RunStateError',
      code: 'BATON_RUN_STATE',
      runId: 'run-3',
      status: 'completed',
      message: expect.stringContaining('run run-3 is completed: a finished run cannot be paused'),
    });
    await expect(client.runs.resume('run-3')).rejects.toMatchObject({
      name: 'RunStateError',
      status: 'completed',
      message: expect.stringContaining('a finished run cannot be resumed'),
    });

    await knownRun(store, 'run-4');
    await store.control.requestCancel('run-4', 'stop');
    await expect(client.runs.pause('run-4')).rejects.toMatchObject({
      name: 'RunStateError',
      runId: 'run-4',
      message: expect.stringContaining('a cancel wins over a pause'),
    });
    expect((await store.leases.get('run-4'))?.state).toBeUndefined();
  });

  it('raises NotFoundError for an unknown run and ConfigError without a store', async () => {
    const { client, transport } = world();
    await expect(client.runs.pause('nobody')).rejects.toMatchObject({ name: 'NotFoundError' });
    await expect(client.runs.resume('nobody')).rejects.toMatchObject({ name: 'NotFoundError' });
    const producer = new Client({ transport });
    await expect(producer.runs.pause('run-1')).rejects.toMatchObject({
      name: 'ConfigError',
      message: expect.stringContaining('client.runs.pause() reads the store'),
    });
    await expect(producer.runs.resume('run-1')).rejects.toMatchObject({ name: 'ConfigError' });
  });
});
