import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeEntries, type JournalEntry, type PayloadRef } from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from './index.js';

const BIG = 'z'.repeat(100_000);

describe('client: large payloads by reference', () => {
  it('sends a large input by reference, stored before the message goes out, and a small one inline', async () => {
    const store = memoryStore();
    const transport = memoryTransport();
    const client = new Client({ transport, store });
    const large = await client.start({ name: 'w', version: 1 }, { doc: BIG });
    const small = await client.start({ name: 'w', version: 1 }, { doc: 'short' });
    const [first, second] = await transport.runQueue.fetch({ max: 2, expiresMs: 100 });
    const bigStart = decodeMessage(first!.data) as { inputRef?: PayloadRef; input?: unknown; runId: string };
    expect(bigStart).toMatchObject({ runId: large.runId, inputRef: { run: large.runId } });
    expect(bigStart.input).toBeUndefined();
    expect(first!.data.byteLength).toBeLessThan(1_000);
    expect(await store.payloads.get(large.runId, bigStart.inputRef!.sha256)).toBeDefined();
    expect(decodeMessage(second!.data)).toMatchObject({ runId: small.runId, input: { doc: 'short' } });
  });

  it('history() reads references back, keeps them for a deleted run, and refuses a changed payload of a live one', async () => {
    const store = memoryStore();
    const transport = memoryTransport();
    const client = new Client({ transport, store });
    // A run journaled by a worker with the claim check: its big result is stored by reference.
    await store.runs.create({ runId: 'r1', workflow: 'w', version: 1, input: null, idempotencyKey: null });
    const handle = await client.start({ name: 'w', version: 1 }, BIG, { runId: 'r1' });
    const ref = (
      decodeMessage((await transport.runQueue.fetch({ max: 1, expiresMs: 100 }))[0]!.data) as {
        inputRef: PayloadRef;
      }
    ).inputRef;
    const entry = {
      type: 'ActivityCompleted',
      seq: 0,
      name: 'a',
      resultRef: ref,
      attempts: 1,
      epoch: 1,
      at: 1,
    } as unknown as JournalEntry;
    await transport.journal.append({ runId: handle.runId, data: encodeEntries([entry]) });
    const history = await client.history('r1');
    expect(history[0]?.entry).toMatchObject({ type: 'ActivityCompleted', result: BIG });
    expect(history[0]?.entry).not.toHaveProperty('resultRef');

    // Gone from the store (retention on a bus that keeps journals, like Kafka): references stay.
    const lease = await store.leases.acquire('r1', 'w', 1_000);
    await store.runs.finish('r1', lease.ok ? lease.epoch : 0, { status: 'completed', result: null });
    expect(await store.retention.delete('r1')).toBe(true);
    expect((await client.history('r1'))[0]?.entry).toMatchObject({ resultRef: ref });

    // A run the store knows, whose payload is other bytes than its hash says: refused, named.
    await store.runs.create({ runId: 'r2', workflow: 'w', version: 1, input: null, idempotencyKey: null });
    await store.payloads.put('r2', ref.sha256, new TextEncoder().encode('"changed"'));
    await transport.journal.append({ runId: 'r2', data: encodeEntries([{ ...entry }]) });
    await expect(client.history('r2')).rejects.toMatchObject({
      name: 'CheckpointIntegrityError',
      message: expect.stringContaining('run r2: ActivityCompleted entry of step 0 failed verification'),
    });
  });
});
