import { describe, expect, it } from 'vitest';
import type { PayloadStore, Store, Transport } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import type { WorkerEvent } from '../events.js';
import { silentLogger } from '../logger.js';
import { Maintenance, RETENTION_SWEEP } from './maintenance.js';

const HOUR = 3_600_000;

/** A run created, claimed with one journal record, and left running (finished when `finish`). */
async function run(store: Store, transport: Transport, runId: string, finish: boolean): Promise<void> {
  await store.runs.create({ runId, workflow: 'w', version: 1, input: null, idempotencyKey: null });
  const lease = await store.leases.acquire(runId, 'worker-a', HOUR);
  if (!lease.ok) throw new Error('not acquired');
  await transport.journal.append({ runId, data: new Uint8Array([1]) });
  if (finish) await store.runs.finish(runId, lease.epoch, { status: 'completed', result: null });
}

function setUp(retentionMs: number, payloads?: PayloadStore) {
  let now = 1_700_000_000_000;
  const store = memoryStore({ clock: () => now });
  const transport = memoryTransport();
  const events: WorkerEvent[] = [];
  let expired = 0;
  const maintenance = new Maintenance(store, transport, {
    workerId: 'w1',
    reapIntervalMs: HOUR,
    deadWorkerScanMs: 0,
    reclaimAfterMs: 5_000,
    logger: silentLogger,
    emit: (e) => events.push(e),
    retentionMs,
    retentionSweepMs: HOUR,
    payloads,
    runsExpired: { add: (n) => (expired += n) },
  });
  return {
    store,
    transport,
    events,
    maintenance,
    advance: (ms: number) => (now += ms),
    counted: () => expired,
  };
}

describe('maintenance: the retention sweep', () => {
  it('deletes finished runs past the TTL with their journal, and nothing of an unfinished run', async () => {
    const { store, transport, events, maintenance, advance } = setUp(HOUR);
    await run(store, transport, 'old-done', true);
    await run(store, transport, 'old-running', false);
    advance(2 * HOUR);
    await run(store, transport, 'young-done', true);

    expect(await maintenance.sweepExpiredRuns()).toEqual(['old-done']);
    expect(await store.runs.get('old-done')).toBeUndefined();
    expect(await transport.journal.read('old-done', 0)).toEqual([]);
    expect((await store.runs.get('old-running'))?.status).toBe('running');
    expect(await transport.journal.read('old-running', 0)).toHaveLength(1);
    expect((await store.runs.get('young-done'))?.status).toBe('completed');
    expect(await transport.journal.read('young-done', 0)).toHaveLength(1);
    expect(events).toEqual([{ type: 'runs-expired', runIds: ['old-done'] }]);
    await maintenance.stop();
  });

  it('keeps deleting batches while expired runs remain, up to the bound of a pass, leaving tombstones', async () => {
    const { store, transport, events, maintenance, advance } = setUp(HOUR);
    const total = RETENTION_SWEEP.passRuns + RETENTION_SWEEP.batch + 5;
    for (let i = 0; i < total; i += 1) await run(store, transport, `r${i}`, true);
    advance(2 * HOUR);
    // A pass stops on its count or time bound with runs left, and says so; the next goes on.
    const first = await maintenance.sweepPass();
    expect(first.more).toBe(true);
    expect(first.deleted.length).toBeLessThanOrEqual(RETENTION_SWEEP.passRuns);
    expect(first.deleted.length % RETENTION_SWEEP.batch).toBe(0);
    const deleted = [...first.deleted];
    for (let pass = 0; pass < 100; pass += 1) {
      const next = await maintenance.sweepPass();
      deleted.push(...next.deleted);
      if (!next.more) break;
    }
    await maintenance.stop(); // waits for the journal purges queued behind the store deletes
    expect(deleted).toHaveLength(total);
    expect(new Set(deleted).size).toBe(total);
    // One event per store round trip, each at most a batch.
    expect(events.every((e) => e.type === 'runs-expired' && e.runIds.length <= RETENTION_SWEEP.batch)).toBe(
      true,
    );
    expect(events).toHaveLength(Math.ceil(total / RETENTION_SWEEP.batch));
    expect(await store.retention.tombstone('r0')).toEqual({ runId: 'r0', deletedAt: expect.any(Number) });
    expect(await transport.journal.read('r0', 0)).toEqual([]);
    await maintenance.stop();
  });

  it('counts the deleted runs and goes on when a journal purge fails', async () => {
    const { store, transport, maintenance, advance, counted } = setUp(HOUR);
    for (const runId of ['a', 'b', 'c']) await run(store, transport, runId, true);
    advance(2 * HOUR);
    const purge = transport.journal.purge.bind(transport);
    transport.journal.purge = async (runId) => {
      if (runId === 'b') throw new Error('bus unavailable');
      await purge(runId);
    };
    expect(await maintenance.sweepExpiredRuns()).toEqual(['a', 'b', 'c']);
    expect(counted()).toBe(3);
    expect(await transport.journal.read('a', 0)).toEqual([]);
    expect(await transport.journal.read('b', 0)).toHaveLength(1);
    expect(await store.runs.get('b')).toBeUndefined();
    await maintenance.stop();
  });

  it('deletes the payloads of the expired runs from a payload store apart from the store, in one call', async () => {
    const calls: string[][] = [];
    const separate = memoryStore();
    const payloads: PayloadStore = {
      location: 'separate',
      put: (runId, sha256, data) => separate.payloads.put(runId, sha256, data),
      get: (runId, sha256) => separate.payloads.get(runId, sha256),
      delete: (runIds) => (calls.push([...runIds]), separate.payloads.delete(runIds)),
    };
    const { store, transport, maintenance, advance } = setUp(HOUR, payloads);
    const bytes = new Uint8Array([1, 2, 3]);
    for (const runId of ['a', 'b', 'c']) {
      await run(store, transport, runId, runId !== 'c');
      await payloads.put(runId, 'f'.repeat(64), bytes);
    }
    advance(2 * HOUR);
    expect(await maintenance.sweepExpiredRuns()).toEqual(['a', 'b']);
    expect(calls).toEqual([['a', 'b']]);
    expect(await payloads.get('a', 'f'.repeat(64))).toBeUndefined();
    expect(await payloads.get('c', 'f'.repeat(64))).toEqual(bytes);
    await maintenance.stop();
  });

  it('does nothing when retention is off', async () => {
    const { store, transport, maintenance, advance } = setUp(0);
    await run(store, transport, 'kept', true);
    advance(1_000 * HOUR);
    expect(await maintenance.sweepExpiredRuns()).toEqual([]);
    expect(await store.runs.get('kept')).toBeDefined();
    await maintenance.stop();
  });
});
