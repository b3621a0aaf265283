import { describe, expect, it } from 'vitest';
import { hasPresence, type Store } from '@baton/core/adapter';
import { decodeMessage } from '@baton/core/runtime';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import type { WorkerEvent } from './events.js';
import { silentLogger } from './logger.js';
import { Maintenance } from './maintenance.js';

/** A store whose presence reports the given runs' owner as dead, once. */
function storeWithDeadWorker(runIds: string[]): Store {
  const store = memoryStore();
  let pending = [...runIds];
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== 'reapDeadWorkers') return Reflect.get(target, prop, receiver);
      return async (limit: number) => {
        const batch = pending.slice(0, limit);
        pending = pending.slice(limit);
        return batch;
      };
    },
  });
}

describe('maintenance: the dead-worker scan', () => {
  it('enqueues a resume for every run of a dead worker, batch after batch, and reports the cause', async () => {
    const runIds = Array.from({ length: 150 }, (_, i) => `run-${i}`);
    const transport = memoryTransport();
    const events: WorkerEvent[] = [];
    const maintenance = new Maintenance(storeWithDeadWorker(runIds), transport, {
      reapIntervalMs: 60_000,
      deadWorkerScanMs: 60_000,
      reclaimAfterMs: 5_000,
      logger: silentLogger,
      emit: (e) => events.push(e),
    });
    await maintenance.scanDeadWorkers();

    const resumed = (await transport.fetch({ max: 500, expiresMs: 0 })).map((d) => decodeMessage(d.data));
    expect(resumed.map((m) => m.runId).sort()).toEqual([...runIds].sort());
    expect(resumed.every((m) => m.kind === 'resume' && m.reason === 'reaped')).toBe(true);
    expect(events).toEqual([
      { type: 'leases-reaped', runIds: runIds.slice(0, 100), cause: 'dead-worker' },
      { type: 'leases-reaped', runIds: runIds.slice(100), cause: 'dead-worker' },
    ]);
    await maintenance.stop();
  });

  it('survives a store that fails the scan, and tries again next period', async () => {
    const store = new Proxy(memoryStore(), {
      get(target, prop, receiver) {
        if (prop === 'reapDeadWorkers') return async () => Promise.reject(new Error('store down'));
        return Reflect.get(target, prop, receiver);
      },
    });
    const warnings: unknown[] = [];
    const maintenance = new Maintenance(store, memoryTransport(), {
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

  it('finds no dead workers on a store without presence, and leaves their runs to lease expiry', async () => {
    const store = memoryStore();
    expect(hasPresence(store)).toBe(false);
    const warnings: unknown[] = [];
    const events: WorkerEvent[] = [];
    const maintenance = new Maintenance(store, memoryTransport(), {
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
