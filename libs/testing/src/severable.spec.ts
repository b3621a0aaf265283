/**
 * The in-process crash stand-in: a severed adapter's calls hang, nested capabilities (the group
 * log, the store's leases and runs) are cut with it, and each nested capability is one proxy, as on the adapter itself.
 * What a worker fetched before the crash is not acked after it: the bus redelivers it.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { severableStore, severableTransport } from './severable.js';

const settlesWithin = async (promise: Promise<unknown>, ms: number): Promise<boolean> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
};

describe('severableTransport', () => {
  it('hands out one proxy per nested capability, and cuts it off with the adapter', async () => {
    const transport = memoryTransport();
    await transport.connect();
    const { adapter, sever } = severableTransport(transport);
    const groupLog = adapter.groupLog!;
    expect(adapter.groupLog).toBe(groupLog);
    expect(await groupLog.appendGroupRecord('w1', new Uint8Array([1]))).toBe(1);
    sever();
    expect(await settlesWithin(groupLog.appendGroupRecord('w1', new Uint8Array([2])), 50)).toBe(false);
    // The adapter itself still takes appends: only the severed worker's view is cut.
    expect(await transport.groupLog!.appendGroupRecord('w1', new Uint8Array([3]))).toBe(2);
    await transport.close();
  });

  it('cuts off fetches and the acks of what was fetched, while the bus redelivers to others', async () => {
    const transport = memoryTransport({ ackWaitMs: 100 });
    await transport.connect();
    const { adapter, sever } = severableTransport(transport);
    expect(adapter.name).toBe(transport.name);
    await adapter.runQueue.enqueue(new Uint8Array([1]));
    await adapter.runQueue.enqueue(new Uint8Array([2]));
    const [first] = await adapter.runQueue.fetch({ max: 1, expiresMs: 100 });
    expect(first?.data).toEqual(new Uint8Array([1]));
    sever();
    expect(await settlesWithin(first!.ack(), 50)).toBe(false);
    expect(await settlesWithin(adapter.runQueue.fetch({ max: 1, expiresMs: 10 }), 50)).toBe(false);
    // The unacked message is the bus's again, for the live workers.
    const redelivered = await transport.runQueue.fetch({ max: 2, expiresMs: 1_000 });
    expect(redelivered.map((d) => d.data[0]).sort()).toEqual([1, 2]);
    await transport.close();
  });
});

describe('severableStore', () => {
  it('cuts every capability of the store off with it, while the store itself keeps answering', async () => {
    const store = memoryStore();
    const { adapter, sever } = severableStore(store);
    const leases = adapter.leases;
    expect(adapter.leases).toBe(leases);
    await adapter.runs.create({ runId: 'r1', workflow: 'w', version: 1, input: null, idempotencyKey: null });
    expect(await leases.acquire('r1', 'w1', 60_000)).toMatchObject({ ok: true, epoch: 1 });
    sever();
    expect(await settlesWithin(leases.renew([{ runId: 'r1', epoch: 1 }], 60_000), 50)).toBe(false);
    expect(await settlesWithin(adapter.runs.get('r1'), 50)).toBe(false);
    // Only the severed worker's view is cut: the store still answers everyone else.
    expect((await store.runs.get('r1'))?.runId).toBe('r1');
    await store.close();
  });
});
