/**
 * client.close(): closes the transport, the store and a payload store of its own it was given,
 * once however often it is called, and every call after it rejects with BATON_CLOSED.
 */
import { describe, expect, it, vi } from 'vitest';
import { defineWorkflow } from '@baton/core';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from './index.js';

const wf = defineWorkflow({ name: 'orders', version: 1, run: async () => null });

describe('client.close()', () => {
  it('closes the transport and the store it was given, once, however often it is called', async () => {
    const transport = memoryTransport();
    const store = memoryStore();
    const closeTransport = vi.spyOn(transport, 'close');
    const closeStore = vi.spyOn(store, 'close');
    const client = new Client({ transport, store });
    await client.start(wf, null);

    const first = client.close();
    expect(client.close()).toBe(first);
    await first;
    await client.close();
    expect(closeTransport).toHaveBeenCalledTimes(1);
    expect(closeStore).toHaveBeenCalledTimes(1);
    // The adapters really are closed: their own calls refuse.
    await expect(transport.runQueue.fetch({ max: 1, expiresMs: 10 })).rejects.toMatchObject({
      code: 'BATON_CLOSED',
    });
  });

  it('makes every later call reject with BATON_CLOSED, before anything is sent', async () => {
    const transport = memoryTransport();
    const client = new Client({ transport, store: memoryStore() });
    await client.close();
    await expect(client.start(wf, null)).rejects.toMatchObject({
      code: 'BATON_CLOSED',
      message: expect.stringMatching(/called after close\(\)/),
    });
    await expect(client.signal('run-1', 'go', 1)).rejects.toMatchObject({ code: 'BATON_CLOSED' });
    await expect(client.connect()).rejects.toMatchObject({ code: 'BATON_CLOSED' });
  });

  it('closes a payload store of its own too, and a producer without a store', async () => {
    const store = memoryStore();
    const closePayloads = vi.fn(async () => undefined);
    const payloads = Object.assign(memoryStore().payloads!, { close: closePayloads });
    const withPayloads = new Client({
      transport: memoryTransport(),
      store,
      largePayloads: { thresholdBytes: 10, payloads },
    });
    await withPayloads.close();
    expect(closePayloads).toHaveBeenCalledTimes(1);

    const transport = memoryTransport();
    const closeTransport = vi.spyOn(transport, 'close');
    await new Client({ transport }).close();
    expect(closeTransport).toHaveBeenCalledTimes(1);
  });

  it('closes every adapter even when one fails, then rejects with that failure', async () => {
    const transport = memoryTransport();
    const store = memoryStore();
    vi.spyOn(transport, 'close').mockRejectedValue(new Error('socket hang up'));
    const closeStore = vi.spyOn(store, 'close');
    const client = new Client({ transport, store });
    await expect(client.close()).rejects.toThrow('socket hang up');
    expect(closeStore).toHaveBeenCalledTimes(1);
    await expect(client.close()).rejects.toThrow('socket hang up');
  });
});
