/**
 * The names that keep one installation's data apart from another's on shared servers: the bus
 * prefix (NATS streams and consumer, Kafka topics and group), the Redis key prefix, the Postgres
 * schema. The `worker ready` line shows them, so an operator can tell at a glance which data a pod
 * reads (two fleets that should be apart but share a prefix steal each other's runs).
 *
 * Each is what the adapter itself resolves (variable, URL parameter or default): its registration's
 * `describeNamespace` reads it through the adapter's own option resolver, so the line shows what is
 * in use and not a guess. No secret is part of any of them.
 */
import type { WorkerAppConfig } from './config.js';
import { registrationFor } from './registry.js';

/**
 * The fields the registered adapters give, e.g. `transportPrefix` (`BATON_NATS_PREFIX` or
 * `BATON_KAFKA_PREFIX` as the transport uses it), `redisKeyPrefix`, `postgresSchema`.
 */
export type Namespaces = Record<string, string>;

/** The prefixes and schema in use; call after the adapters were built (their options are valid). */
export function namespacesInUse(config: WorkerAppConfig): Namespaces {
  const settings = config as unknown as Record<string, object>;
  const bus = registrationFor('transport', config.transportUrl);
  const store = registrationFor('store', config.storeUrl);
  return {
    ...bus?.describeNamespace(config.transportUrl, settings[bus.name]),
    ...store?.describeNamespace(config.storeUrl, settings[store.name]),
  };
}
