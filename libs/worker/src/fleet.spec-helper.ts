/** A small fleet on shared memory adapters, each worker cut off-able to simulate a crash. */
import type { Store, Transport } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from '@baton/client';
import { supportsGroupJournal, withGroupJournal } from '@baton/core/runtime';
import { severableStore, severableTransport, type Severable } from '@baton/testing/severable';
import { Worker, type WorkerOptions } from './index.js';
import type { WorkerEvent } from './events.js';

export interface FleetWorker {
  worker: Worker;
  transport: Severable<Transport>;
  store: Severable<Store>;
  events: WorkerEvent[];
  /** Simulated SIGKILL: the worker's adapters hang from now on; nothing is released. */
  crash(): void;
}

export interface Fleet {
  transport: Transport;
  store: Store;
  /**
   * Runs' journals as every worker reads them, whether a run is journaled on its own or through
   * group records (the default with these adapters): read, append (a marker, a tampered copy) and
   * purge through this, never through `transport`'s own journal.
   */
  journal: Transport;
  client: Client;
  workers: FleetWorker[];
  spawn(overrides?: Partial<WorkerOptions>): Promise<FleetWorker>;
  shutdown(): Promise<void>;
}

export const FAST: Partial<WorkerOptions> = {
  leaseMs: 400,
  heartbeatMs: 100,
  reapIntervalMs: 50,
  fetchWaitMs: 100,
  inProcessWaitMs: 0,
  drainTimeoutMs: 2_000,
};

export function fleet(
  defaults: Partial<WorkerOptions> & Pick<WorkerOptions, 'workflows'>,
  wrapTransport: (t: Transport) => Transport = (t) => t,
  makeStore: () => Store = () => memoryStore(),
): Fleet {
  const transport = wrapTransport(memoryTransport({ ackWaitMs: 1_000 }));
  const store = makeStore();
  const workers: FleetWorker[] = [];
  return {
    transport,
    store,
    journal: supportsGroupJournal(transport, store)
      ? withGroupJournal(transport, store, { mode: 'per-run', log: 'test-journal' })
      : transport,
    // The client seals and opens values with the fleet's default keys, as a producer of the fleet would.
    client: new Client({
      transport,
      store,
      ...(defaults.payloadProtection !== undefined && { payloadProtection: defaults.payloadProtection }),
    }),
    workers,
    async spawn(overrides = {}) {
      const t = severableTransport(transport);
      const s = severableStore(store);
      const events: WorkerEvent[] = [];
      const worker = new Worker({
        ...FAST,
        ...defaults,
        ...overrides,
        transport: t.adapter,
        store: s.adapter,
        workerId: `w${workers.length + 1}`,
        onEvent: (e) => events.push(e),
      });
      await worker.start();
      const entry: FleetWorker = {
        worker,
        transport: t,
        store: s,
        events,
        crash: () => {
          t.sever();
          s.sever();
        },
      };
      workers.push(entry);
      return entry;
    },
    async shutdown() {
      await Promise.all(workers.filter((w) => !w.store.severed).map((w) => w.worker.stop()));
    },
  };
}

/** Polls until `check` returns true (or throws after `timeoutMs`). */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Counts executions per idempotency key: the outside world's view of side effects. */
export class Ledger {
  readonly executions = new Map<string, number>();
  record(key: string): void {
    this.executions.set(key, (this.executions.get(key) ?? 0) + 1);
  }
  count(key: string): number {
    return this.executions.get(key) ?? 0;
  }
}
