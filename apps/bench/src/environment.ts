/**
 * The bench's namespaced environment: one fresh prefix on the bus and the store per workload, so
 * a benchmark never sees another's messages, keys or tables and leaves nothing behind. The worker
 * processes and the bench process build their adapters from the same variables, through the
 * worker app's own factories (`readConfig`, `transportFromConfig`, `storeFromConfig`): what is
 * measured is what an operator deploys.
 */
import { randomBytes } from 'node:crypto';
import type { Store, Transport } from '@baton/core/adapter';
import type { CrashEnvironmentFactory } from '@baton/testing/crash';
import { loadAdapterCode, readConfig, storeFromConfig, transportFromConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';
import type { BenchConfig, BusKind, StoreKind } from './types.js';

/** The servers the bench talks to (a {@link BenchConfig} fits). */
export type BenchUrls = Pick<BenchConfig, 'natsUrl' | 'kafkaUrl' | 'redisUrl' | 'postgresUrl'>;

export interface BenchEnvironmentOptions {
  transport: BusKind;
  store: StoreKind;
  urls: BenchUrls;
  /** Lowercase letters and digits, starting with a letter. @defaultValue a fresh random one */
  ns?: string;
  /** Server URLs that replace the ones `urls` names for this bus or store. */
  transportUrl?: string;
  storeUrl?: string;
}

/** Shaped like the crash harness's CrashEnvironment, so the harness's fleet and world accept it. */
export interface BenchEnvironment {
  ns: string;
  /** Variables that point a worker process at this namespace (add BATON_WORKFLOWS and tuning). */
  workerEnv: Record<string, string>;
  /** The same bus and store for the bench process; not connected yet. */
  transport: Transport;
  store: Store;
  /** Deletes the namespace's streams or topics and its keys or schema. Irreversible. */
  dispose(): Promise<void>;
}

/** A fresh namespace: valid as a NATS/Kafka prefix, a Redis key prefix and a Postgres schema. */
export function newNamespace(): string {
  return `b${randomBytes(5).toString('hex')}`;
}

export async function benchEnvironment(options: BenchEnvironmentOptions): Promise<BenchEnvironment> {
  const { transport: bus, store: storeKind, urls } = options;
  const ns = options.ns ?? newNamespace();
  if (!/^[a-z][a-z0-9]{0,40}$/.test(ns))
    throw new Error(`namespace '${ns}' must be lowercase letters and digits`);
  const transportUrl =
    options.transportUrl ??
    (bus === 'kafka' ? urls.kafkaUrl : bus === 'redis' ? urls.redisUrl : urls.natsUrl);
  const storeUrl = options.storeUrl ?? (storeKind === 'redis' ? urls.redisUrl : urls.postgresUrl);
  // Only what a namespace needs: every tuning variable keeps the worker's default.
  const workerEnv: Record<string, string> = {
    BATON_TRANSPORT_URL: transportUrl,
    BATON_STORE_URL: storeUrl,
    // The namespace as each adapter's registration spells it (a prefix, a key prefix, a schema).
    ...isolatedEnv('transport', transportUrl, ns),
    ...isolatedEnv('store', storeUrl, ns),
  };
  // readConfig insists on a workflow module; the bench process loads none.
  const config = readConfig({ ...workerEnv, BATON_WORKFLOWS: 'none-in-the-bench-process' });
  await loadAdapterCode(config);
  return {
    ns,
    workerEnv,
    transport: transportFromConfig(config),
    store: storeFromConfig(config),
    dispose: async () => {
      // Both halves are attempted; the first failure is reported.
      const results = await Promise.allSettled([
        removeIsolated('transport', transportUrl, ns),
        removeIsolated('store', storeUrl, ns),
      ]);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

/** The environment as a factory for the crash harness (`CrashWorld.create`), which picks the namespace. */
export function benchEnvironmentFactory(
  transport: BusKind,
  store: StoreKind,
  urls: BenchUrls,
): CrashEnvironmentFactory {
  return (ns, overrides) =>
    benchEnvironment({
      transport,
      store,
      urls,
      ns,
      ...(overrides.transportUrl !== undefined && { transportUrl: overrides.transportUrl }),
      ...(overrides.storeUrl !== undefined && { storeUrl: overrides.storeUrl }),
    });
}
