/**
 * Crash-suite environments for the adapter pairs the worker process supports: the worker
 * processes and the test process build their adapters from the same variables, through the same
 * code (`readConfig` + the URL factories), so the suite tests exactly what operators deploy.
 */
import type { CrashEnvironmentFactory } from '@baton/testing/crash';
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { ADAPTERS, loadAdapterCode, readConfig, storeFromConfig, transportFromConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';

export type StoreKind = 'redis' | 'postgres';
export type BusKind = 'nats' | 'kafka' | 'redis';

/**
 * Kafka settings for crash tests: a short session timeout (the infra broker allows 1 s), so a
 * SIGKILLed member's partitions move within seconds and every kill forces a rebalance the test
 * lives through; several partitions, so each worker holds some.
 */
const KAFKA_CRASH_ENV = {
  BATON_KAFKA_PARTITIONS: '6',
  BATON_KAFKA_SESSION_TIMEOUT_MS: '3000',
};

/**
 * `extraEnv` adds worker variables, e.g. BATON_SIGNING_KEYS to run the suite with signed
 * checkpoints and the hash chain on (journal records stay readable by the suite's identity codec).
 */
export function crashEnvironment(
  storeKind: StoreKind,
  bus: BusKind = 'nats',
  extraEnv: Record<string, string> = {},
): CrashEnvironmentFactory {
  return async (ns, overrides) => {
    const transportUrl =
      overrides.transportUrl ??
      (bus === 'kafka' ? kafkaTestUrl() : bus === 'redis' ? redisTestUrl() : natsTestUrl());
    const storeUrl = overrides.storeUrl ?? (storeKind === 'redis' ? redisTestUrl() : postgresTestUrl());
    const workerEnv: Record<string, string> = {
      BATON_TRANSPORT_URL: transportUrl,
      BATON_STORE_URL: storeUrl,
      // The namespace as each adapter's registration spells it (a prefix, a key prefix, a schema).
      ...isolatedEnv('transport', transportUrl, ns),
      ...(bus === 'kafka' ? KAFKA_CRASH_ENV : {}),
      ...isolatedEnv('store', storeUrl, ns),
      ...extraEnv,
    };
    const config = readConfig({ ...workerEnv, BATON_WORKFLOWS: 'unused-in-the-test-process' });
    await loadAdapterCode(config);
    return {
      workerEnv,
      transport: transportFromConfig(config),
      store: storeFromConfig(config),
      dispose: async () => {
        await removeIsolated('transport', transportUrl, ns);
        await removeIsolated('store', storeUrl, ns);
      },
    };
  };
}

/** How the crash environment names each registered adapter's test server. */
const BUS_KINDS: Record<string, BusKind> = { nats: 'nats', kafka: 'kafka', redisBus: 'redis' };
const STORE_KINDS: Record<string, StoreKind> = { redis: 'redis', postgres: 'postgres' };

/**
 * Every registered bus with every registered store (`ADAPTERS` in @baton/host), named
 * `bus+store` as the crash specs name them: a new transport or store is crashed with every partner
 * as soon as it is registered, and the specs fail, naming what to add here, until its test server
 * is known.
 */
export function registeredPairs(): Array<{ pair: string; bus: BusKind; store: StoreKind }> {
  return ADAPTERS.filter((r) => r.kind === 'transport').flatMap((transport) => {
    const bus = BUS_KINDS[transport.name];
    if (bus === undefined) {
      throw new Error(
        `the crash specs have no test server for the bus '${transport.name}': add it to BUS_KINDS`,
      );
    }
    return ADAPTERS.filter((r) => r.kind === 'store').map((registration) => {
      const store = STORE_KINDS[registration.name];
      if (store === undefined) {
        throw new Error(
          `the crash specs have no test server for the store '${registration.name}': add it to STORE_KINDS`,
        );
      }
      return { pair: `${bus}+${store}`, bus, store };
    });
  });
}
