/**
 * For integration specs that run real `Worker`s in the test process: the bus/store pairs they run
 * on, and one fresh namespace per describe block with its lifecycle (connect before all, stop the
 * test's workers after each, close and delete everything after all).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { Client } from '@baton/client';
import type { Store, Transport } from '@baton/core/adapter';
import { supportsGroupJournal, withGroupJournal } from '@baton/core/runtime';
import { Worker, type WorkerOptions } from '@baton/worker';
import { crashEnvironment } from './crash-environment.spec-helper.js';

/** The pairs the in-process integration specs run on. */
export const IN_PROCESS_PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats') },
  { name: 'nats+postgres', factory: crashEnvironment('postgres', 'nats') },
  { name: 'kafka+redis', factory: crashEnvironment('redis', 'kafka') },
];

export interface InProcessNamespace {
  /** Connected in beforeAll. */
  transport: Transport;
  store: Store;
  /**
   * Runs' journals as the workers read them, whether a run is journaled on its own or through group
   * records (the default where bus and store support it): read and append through this.
   */
  journal: Transport;
  client: Client;
  /**
   * The variables a worker process of this namespace would get (the bus and store URLs, the
   * prefixes): what a process outside Node needs to reach the same bus.
   */
  workerEnv: Record<string, string>;
  /** Workers a test started; each is stopped after the test. */
  readonly workers: Worker[];
}

/** Registers the hooks of one namespace on `factory`; its fields are set once beforeAll ran. */
export function inProcessNamespace(
  factory: (typeof IN_PROCESS_PAIRS)[number]['factory'],
  prefix: string,
): InProcessNamespace {
  const ns = { workers: [] as Worker[] } as unknown as InProcessNamespace;
  let dispose: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const env = await factory(`${prefix}${randomBytes(5).toString('hex')}`, {});
    ns.transport = env.transport;
    ns.store = env.store;
    ns.workerEnv = env.workerEnv;
    dispose = env.dispose;
    ns.journal = supportsGroupJournal(ns.transport, ns.store)
      ? withGroupJournal(ns.transport, ns.store, { mode: 'per-run', log: 'test-journal' })
      : ns.transport;
    ns.client = new Client({ transport: ns.transport, store: ns.store });
    await ns.client.connect();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(ns.workers.splice(0).map((w) => w.stop()));
  }, 30_000);
  afterAll(async () => {
    await Promise.allSettled([ns.transport?.close(), ns.store?.close()]);
    await dispose?.();
  }, 60_000);
  return ns;
}

/**
 * Starts `count` Workers on the namespace's transport and store (stopped after the test), with
 * short leases and polls so a spec's runs move quickly; `options` adds to or overrides those.
 */
export async function startInProcessWorkers(
  ns: InProcessNamespace,
  options: Partial<WorkerOptions> & Pick<WorkerOptions, 'workflows'>,
  count = 2,
): Promise<Worker[]> {
  const started: Worker[] = [];
  for (let i = 0; i < count; i++) {
    const worker = new Worker({
      transport: ns.transport,
      store: ns.store,
      leaseMs: 3_000,
      fetchWaitMs: 200,
      drainTimeoutMs: 2_000,
      ...options,
    });
    await worker.start();
    ns.workers.push(worker);
    started.push(worker);
  }
  return started;
}

/** Polls `check` every 25 ms until it holds; fails naming `what` after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
