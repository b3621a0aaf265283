import { describe, expect, it } from 'vitest';
import { damageMemoryCheckpoint, memoryStore, memoryTransport } from '@baton/core/memory';
import { describeStoreConformance, describeTransportConformance } from './conformance.js';

const ACK_WAIT_MS = 300;

describeTransportConformance('memory', () => memoryTransport({ ackWaitMs: ACK_WAIT_MS }), {
  ackWaitMs: ACK_WAIT_MS,
});
// No presence section: the in-process store has no worker presence (optional in the contract; it
// has no connection that could drop), so a crashed in-process worker is found by lease expiry alone.
describeStoreConformance('memory', () => memoryStore(), {
  // The memory store keeps objects, not text: "garbage" stands for a record that is no checkpoint.
  damage: async (store, runId, seq, damage) => {
    const body = (await store.checkpoints.list(runId)).some((s) => s.seq === seq)
      ? { ...(await store.checkpoints.load(runId, seq)) }
      : undefined;
    const damaged =
      damage === 'garbage'
        ? 'not a checkpoint'
        : damage === 'entries-not-list'
          ? { ...body, entries: { 0: 'not a list' } }
          : { ...body, status: undefined };
    if (!damageMemoryCheckpoint(store, runId, seq, damaged)) throw new Error(`no checkpoint ${seq}`);
  },
});

// Behaviour the contracts leave to each adapter, pinned down for the memory ones.
describe('memory adapters', () => {
  const CLOSED = { name: 'BatonError', code: 'BATON_CLOSED' };

  it('rejects transport operations after close and empties waiting fetches', async () => {
    const transport = memoryTransport();
    const waiting = transport.runQueue.fetch({ max: 1, expiresMs: 10_000 });
    await transport.close();
    expect(await waiting).toEqual([]);
    await expect(transport.runQueue.enqueue(new Uint8Array([1]))).rejects.toMatchObject(CLOSED);
    await expect(transport.runQueue.fetch({ max: 1, expiresMs: 0 })).rejects.toMatchObject(CLOSED);
    await expect(transport.journal.append({ runId: 'r', data: new Uint8Array() })).rejects.toMatchObject(
      CLOSED,
    );
    await expect(transport.connect()).rejects.toMatchObject(CLOSED);
  });

  it('rejects store operations after close', async () => {
    const store = memoryStore();
    await store.close();
    await expect(store.leases.acquire('r', 'w', 1_000)).rejects.toMatchObject(CLOSED);
    await expect(store.leases.now()).rejects.toMatchObject(CLOSED);
  });

  it('refuses nonsensical transport options at creation', () => {
    expect(() => memoryTransport({ ackWaitMs: 0 })).toThrow(/ackWaitMs/);
    expect(() => memoryTransport({ dedupWindowMs: -1 })).toThrow(/dedupWindowMs/);
  });

  it('numbers journal records from one counter shared by all runs', async () => {
    const transport = memoryTransport();
    const a1 = await transport.journal.append({ runId: 'a', data: new Uint8Array() });
    const b1 = await transport.journal.append({ runId: 'b', data: new Uint8Array() });
    const a2 = await transport.journal.append({ runId: 'a', data: new Uint8Array() });
    expect([a1, b1, a2]).toEqual([1, 2, 3]);
    await transport.close();
  });

  it('measures lease expiry on the injected clock', async () => {
    let now = 1_000;
    const store = memoryStore({ clock: () => now });
    expect(await store.leases.acquire('r', 'a', 100)).toMatchObject({ ok: true, epoch: 1 });
    now += 100;
    expect(await store.leases.acquire('r', 'b', 100)).toMatchObject({ ok: true, epoch: 2 });
    expect(await store.leases.now()).toBe(1_100);
  });
});
