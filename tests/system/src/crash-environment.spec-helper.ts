/**
 * Crash-suite environments for the adapter pairs the worker process supports: the worker
 * processes and the test process build their adapters from the same variables, through the same
 * code (`readConfig` + the URL factories), so the suite tests exactly what operators deploy.
 */
import type { CrashEnvironmentFactory } from '@baton/testing/crash';
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { loadAdapterCode, readConfig, storeFromConfig, transportFromConfig } from '@baton/host';
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
