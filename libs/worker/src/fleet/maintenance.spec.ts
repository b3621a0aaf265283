import { describe, expect, it } from 'vitest';
import type { PresenceStore, Store } from '@baton/core/adapter';
import { decodeMessage } from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import type { WorkerEvent } from '../events.js';
import { silentLogger } from '../logger.js';
import { Maintenance } from './maintenance.js';

/**
 * A memory store with presence: the given runs' owner is reported dead, once; `turnHolder` says
 * whose turn the scan is (the asker's when undefined), and every ask is recorded.
 */
function storeWithDeadWorker(
  runIds: string[],
  scan: { turnHolder?: string; asks?: string[]; fail?: boolean; workers?: number } = {},
): Store {
  const store = memoryStore();
  let pending = [...runIds];
  const presence: PresenceStore = {
    register: async () => undefined,
    unregister: async () => undefined,
    live: async () => [],
    reapDead: async (limit: number) => {
      if (scan.fail) throw new Error('store down');
      const batch = pending.slice(0, limit);
      pending = pending.slice(limit);
      return batch;
    },
    publishMembership: async () => 1,
    readMembership: async () => ({ generation: 1, turnFree: false }),
    takeScanTurn: async (name: string, workerId: string) => {
      scan.asks?.push(`${name}:${workerId}`);
      return { held: (scan.turnHolder ?? workerId) === workerId, workers: scan.workers ?? 1 };
    },
  };
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'presence') return presence;
      return Reflect.get(target, prop, receiver);
    },
  });
}

describe('maintenance: the dead-worker scan', () => {
  it('enqueues a resume for every run of a dead worker, batch after batch, and reports the cause', async () => {
    const runIds = Array.from({ length: 150 }, (_, i) => `run-${i}`);
    const transport = memoryTransport();
    const events: WorkerEvent[] = [];
    const maintenance = new Maintenance(storeWithDeadWorker(runIds), transport, {
      workerId: 'w1',
      reapIntervalMs: 60_000,
      deadWorkerScanMs: 60_000,
      reclaimAfterMs: 5_000,
      logger: silentLogger,
      emit: (e) => events.push(e),
    });
    await maintenance.scanDeadWorkers();

    const resumed = (await transport.runQueue.fetch({ max: 500, expiresMs: 0 })).map((d) =>
      decodeMessage(d.data),
    );
    expect(resumed.map((m) => m.runId).sort()).toEqual([...runIds].sort());
    expect(resumed.every((m) => m.kind === 'resume' && m.reason === 'reaped')).toBe(true);
    expect(events).toEqual([
      { type: 'leases-reaped', runIds: runIds.slice(0, 100), cause: 'dead-worker' },
      { type: 'leases-reaped', runIds: runIds.slice(100), cause: 'dead-worker' },
    ]);
    await maintenance.stop();
  });

  it('survives a store that fails the scan, and tries again next period', async () => {
    const store = storeWithDeadWorker(['run-1'], { fail: true });
    const warnings: unknown[] = [];
    const maintenance = new Maintenance(store, memoryTransport(), {
      workerId: 'w1',
      reapIntervalMs: 60_000,
      deadWorkerScanMs: 60_000,
      reclaimAfterMs: 5_000,
      logger: { ...silentLogger, warn: (obj) => warnings.push(obj) },
      emit: () => undefined,
    });
    await expect(maintenance.scanDeadWorkers()).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
    await maintenance.stop();
  });

  it("scans only while the scan's turn is its own, and asks less often in a larger fleet", async () => {
    const asks: string[] = [];
    const scan: { turnHolder?: string; asks: string[]; workers: number } = {
      turnHolder: 'w2',
      asks,
      workers: 16,
    };
    const transport = memoryTransport();
    const events: WorkerEvent[] = [];
    const maintenance = new Maintenance(storeWithDeadWorker(['run-1'], scan), transport, {
      workerId: 'w1',
      reapIntervalMs: 60_000,
      deadWorkerScanMs: 250,
      reclaimAfterMs: 5_000,
      logger: silentLogger,
      emit: (e) => events.push(e),
    });
    const scanDeadWorkers = (): Promise<void | { againInMs: number }> =>
      maintenance.inTurn('dead-workers', 250, () => maintenance.scanDeadWorkers());

    // Another worker's turn in a fleet of 16: no scan, and the next ask is two periods away.
    const refused = await scanDeadWorkers();
    expect(asks).toEqual(['dead-workers:w1']);
    expect(refused?.againInMs).toBeGreaterThanOrEqual(2 * 250 * 0.75);
    expect(refused?.againInMs).toBeLessThanOrEqual(2 * 250 * 1.25);
    expect(events).toEqual([]);
    expect(await transport.runQueue.fetch({ max: 10, expiresMs: 0 })).toEqual([]);

    scan.turnHolder = 'w1';
    expect(await scanDeadWorkers()).toBeUndefined();
    expect(events).toEqual([{ type: 'leases-reaped', runIds: ['run-1'], cause: 'dead-worker' }]);
    await maintenance.stop();
  });

  it('runs every scan on a store without turns (no presence)', async () => {
    const maintenance = new Maintenance(memoryStore(), memoryTransport(), {
      workerId: 'w1',
      reapIntervalMs: 60_000,
      deadWorkerScanMs: 250,
      reclaimAfterMs: 5_000,
      logger: silentLogger,
      emit: () => undefined,
    });
    let passes = 0;
    await maintenance.inTurn('expired-leases', 1_000, async () => {
      passes += 1;
    });
    expect(passes).toBe(1);
    await maintenance.stop();
  });

  it('finds no dead workers on a store without presence, and leaves their runs to lease expiry', async () => {
    const store = memoryStore();
    expect(store.presence).toBeUndefined();
    const warnings: unknown[] = [];
    const events: WorkerEvent[] = [];
    const maintenance = new Maintenance(store, memoryTransport(), {
      workerId: 'w1',
      reapIntervalMs: 60_000,
      deadWorkerScanMs: 60_000,
      reclaimAfterMs: 5_000,
      logger: { ...silentLogger, warn: (obj) => warnings.push(obj) },
      emit: (e) => events.push(e),
    });
    await maintenance.scanDeadWorkers();
    expect(warnings).toEqual([]);
    expect(events).toEqual([]);
    await maintenance.stop();
  });
});
