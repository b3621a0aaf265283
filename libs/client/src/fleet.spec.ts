import { describe, expect, it } from 'vitest';
import type { RunQueue, Transport, WorkerReport } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from './index.js';

function report(workerId: string, runsHeld: number): WorkerReport {
  return {
    workerId,
    host: 'node-1',
    pid: 100,
    batonVersion: '0.1.0',
    workflows: [{ name: 'orders', versions: [2, 1] }],
    startedAt: 1_000,
    lastRenewalAt: 2_000,
    runsHeld,
    concurrency: 8,
    draining: false,
  };
}

describe('client.fleet.workers', () => {
  it('lists the reported workers by id, with no presence field on a store without presence', async () => {
    const store = memoryStore();
    const client = new Client({ transport: memoryTransport(), store });
    await store.fleet.report(report('w-b', 2), 60_000);
    await store.fleet.report(report('w-a', 0), 60_000);

    const workers = await client.fleet.workers();
    expect(workers.map((w) => [w.workerId, w.runsHeld])).toEqual([
      ['w-a', 0],
      ['w-b', 2],
    ]);
    expect(workers[0]!.workflows).toEqual([{ name: 'orders', versions: [1, 2] }]);
    expect(workers[0]).not.toHaveProperty('connected');
  });

  it('needs the store, and says so', async () => {
    const client = new Client({ transport: memoryTransport() });
    await expect(client.fleet.workers()).rejects.toThrow(/client.fleet.workers\(\) reads the store/);
  });
});

describe('client.fleet.backlog', () => {
  it('details the memory run queue: waiting messages and those delivered but not acked', async () => {
    const transport = memoryTransport({ ackWaitMs: 60_000 });
    const client = new Client({ transport });
    for (let i = 0; i < 3; i++) await transport.runQueue.enqueue(new TextEncoder().encode(`m${i}`));
    expect(await client.fleet.backlog()).toEqual({
      transport: 'memory',
      total: 3,
      parts: [{ name: 'runs', pending: 3, ackPending: 0 }],
    });
    const [delivery] = await transport.runQueue.fetch({ max: 1, expiresMs: 50 });
    expect(await client.fleet.backlog()).toEqual({
      transport: 'memory',
      total: 2,
      parts: [{ name: 'runs', pending: 2, ackPending: 1 }],
    });
    await delivery!.ack();
    expect((await client.fleet.backlog()).parts).toEqual([{ name: 'runs', pending: 2, ackPending: 0 }]);
    await transport.close();
  });

  it('refuses a transport that cannot count its backlog, and a timeout that is no time', async () => {
    const base = memoryTransport();
    const blind = withRunQueueMember(base, 'backlogDetail', undefined);
    await expect(new Client({ transport: blind }).fleet.backlog()).rejects.toMatchObject({
      code: 'BATON_CONFIG',
      message: expect.stringMatching(/the memory transport cannot count its backlog/),
    });
    await expect(new Client({ transport: base }).fleet.backlog({ timeoutMs: 0 })).rejects.toMatchObject({
      code: 'BATON_CONFIG',
      message: expect.stringMatching(/timeoutMs is 0/),
    });
  });

  it('says so when the bus gives no answer', async () => {
    const base = memoryTransport();
    const silent = withRunQueueMember(base, 'backlogDetail', async () => undefined);
    await expect(new Client({ transport: silent }).fleet.backlog({ timeoutMs: 200 })).rejects.toMatchObject({
      code: 'BATON_TIMEOUT',
      message: expect.stringMatching(/gave no backlog within 200 ms/),
    });
  });
});

/** `transport` with one member of its run queue replaced (a bus without it, or a silent one). */
function withRunQueueMember(transport: Transport, member: keyof RunQueue, value: unknown): Transport {
  const runQueue = new Proxy(transport.runQueue, {
    get: (target, prop, receiver) =>
      prop === member ? value : (Reflect.get(target, prop, receiver) as unknown),
  });
  return new Proxy(transport, {
    get: (target, prop, receiver) =>
      prop === 'runQueue' ? runQueue : (Reflect.get(target, prop, receiver) as unknown),
  });
}
