/**
 * The names that keep one installation's data apart from another's on shared servers: the bus
 * prefix (NATS streams and consumer, Kafka topics and group), the Redis key prefix, the Postgres
 * schema. The `worker ready` line shows them, so an operator can tell at a glance which data a pod
 * reads (two fleets that should be apart but share a prefix steal each other's runs).
 *
 * Each is what the adapter itself resolves (variable, URL parameter or default), read through the
 * adapter's own option resolver, so the line shows what is in use and not a guess. No secret is
 * part of any of them.
 */
import { resolveKafkaOptions } from '@baton/transport-kafka';
import { resolveNatsTransportOptions } from '@baton/transport-nats';
import { resolveRedisStoreOptions } from '@baton/store-redis';
import { resolvePostgresStoreOptions } from '@baton/store-postgres';
import type { WorkerAppConfig } from './config.js';

export interface Namespaces {
  /** `BATON_NATS_PREFIX` or `BATON_KAFKA_PREFIX` as the transport uses it. */
  transportPrefix?: string;
  /** `BATON_REDIS_KEY_PREFIX` as the Redis store uses it. */
  redisKeyPrefix?: string;
  /** `BATON_POSTGRES_SCHEMA` as the Postgres store uses it. */
  postgresSchema?: string;
}

const scheme = (url: string): string => /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase() ?? '';

/** The prefixes and schema in use; call after the adapters were built (their options are valid). */
export function namespacesInUse(config: WorkerAppConfig): Namespaces {
  const namespaces: Namespaces = {};
  const bus = scheme(config.transportUrl);
  if (bus === 'nats' || bus === 'tls') {
    const { prefix } = config.nats;
    namespaces.transportPrefix = resolveNatsTransportOptions({
      servers: config.transportUrl,
      ...(prefix !== undefined && { prefix }),
    }).prefix;
  } else if (bus === 'kafka' || bus === 'kafkas') {
    const { prefix } = config.kafka;
    namespaces.transportPrefix = resolveKafkaOptions({
      brokers: config.transportUrl,
      ...(prefix !== undefined && { prefix }),
    }).prefix;
  }
  const store = scheme(config.storeUrl);
  if (store === 'redis' || store === 'rediss') {
    const { keyPrefix } = config.redis;
    namespaces.redisKeyPrefix = resolveRedisStoreOptions({
      url: config.storeUrl,
      ...(keyPrefix !== undefined && { keyPrefix }),
    }).keyPrefix;
  } else if (store === 'postgres' || store === 'postgresql') {
    const { schema } = config.postgres;
    namespaces.postgresSchema = resolvePostgresStoreOptions({
      url: config.storeUrl,
      ...(schema !== undefined && { schema }),
    }).schema;
  }
  return namespaces;
}
