/**
 * Crash-suite environments for the adapter pairs the worker process supports: the worker
 * processes and the test process build their adapters from the same variables, through the same
 * code (`readConfig` + the URL factories), so the suite tests exactly what operators deploy.
 */
import type { CrashEnvironmentFactory } from '@baton/testing/crash';
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { deleteNatsStreams } from '@baton/transport-nats';
import { deleteKafkaTopics } from '@baton/transport-kafka';
import { purgeRedisKeyPrefix } from '@baton/store-redis';
import { dropPostgresSchema } from '@baton/store-postgres';
import { readConfig } from './config.js';
import { storeFromConfig, transportFromConfig } from './adapters.js';

type StoreKind = 'redis' | 'postgres';
type BusKind = 'nats' | 'kafka';

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
    const transportUrl = overrides.transportUrl ?? (bus === 'kafka' ? kafkaTestUrl() : natsTestUrl());
    const storeUrl = overrides.storeUrl ?? (storeKind === 'redis' ? redisTestUrl() : postgresTestUrl());
    const workerEnv: Record<string, string> = {
      BATON_TRANSPORT_URL: transportUrl,
      BATON_STORE_URL: storeUrl,
      BATON_NATS_PREFIX: ns,
      BATON_KAFKA_PREFIX: ns,
      ...(bus === 'kafka' ? KAFKA_CRASH_ENV : {}),
      BATON_REDIS_KEY_PREFIX: `${ns}:`,
      BATON_POSTGRES_SCHEMA: ns,
      ...extraEnv,
    };
    const config = readConfig({ ...workerEnv, BATON_WORKFLOWS: 'unused-in-the-test-process' });
    return {
      workerEnv,
      transport: transportFromConfig(config),
      store: storeFromConfig(config),
      dispose: async () => {
        if (bus === 'kafka') await deleteKafkaTopics({ brokers: transportUrl, prefix: ns });
        else await deleteNatsStreams({ servers: transportUrl, prefix: ns });
        if (storeKind === 'redis') await purgeRedisKeyPrefix({ url: storeUrl, keyPrefix: `${ns}:` });
        else await dropPostgresSchema({ url: storeUrl, schema: ns });
      },
    };
  };
}
