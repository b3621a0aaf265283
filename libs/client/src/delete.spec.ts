import { describe, expect, it } from 'vitest';
import type { Store, Transport } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from './index.js';

async function claimedRun(store: Store, transport: Transport, runId: string): Promise<number> {
  await store.runs.create({ runId, workflow: 'orders', version: 1, input: null, idempotencyKey: null });
  const lease = await store.leases.acquire(runId, 'worker-a', 30_000);
  if (!lease.ok) throw new Error('not acquired');
  await transport.journal.append({ runId, data: new Uint8Array([1]) });
  return lease.epoch;
}

describe('client.runs.delete', () => {
  it('deletes a finished run from the store and purges its journal and streams', async () => {
    const store = memoryStore();
    const transport = memoryTransport();
    const epoch = await claimedRun(store, transport, 'done');
    await transport.runStreams!.register('done', 'tokens');
    await transport.runStreams!.append({ runId: 'done', stream: 'tokens', data: new Uint8Array([2]) });
    await store.runs.finish('done', epoch, { status: 'completed', result: 1 });
    const client = new Client({ transport, store });

    expect(await client.runs.delete('done')).toEqual({ runId: 'done', journal: 'purged' });
    expect(await store.runs.get('done')).toBeUndefined();
    expect(await transport.journal.read('done', 0)).toEqual([]);
    expect(await transport.runStreams!.read('done', 'tokens', 0)).toEqual([]);
    expect(await transport.runStreams!.names('done')).toEqual([]);
    await expect(client.runs.delete('done')).rejects.toMatchObject({ code: 'BATON_NOT_FOUND' });
  });

  it('refuses a run that is still going, naming its status, and keeps its journal', async () => {
    const store = memoryStore();
    const transport = memoryTransport();
    await claimedRun(store, transport, 'busy');
    const client = new Client({ transport, store });

    await expect(client.runs.delete('busy')).rejects.toMatchObject({
      code: 'BATON_RUN_STATE',
      status: 'running',
      message: expect.stringContaining('run busy is running'),
    });
    expect(await transport.journal.read('busy', 0)).toHaveLength(1);
    expect((await store.runs.get('busy'))?.status).toBe('running');
  });

  it('needs the store', async () => {
    await expect(new Client({ transport: memoryTransport() }).runs.delete('x')).rejects.toMatchObject({
      code: 'BATON_CONFIG',
    });
  });
});
