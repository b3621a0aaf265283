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
import { ConfigError } from '@baton/core';
import { isSentinelUrl, parseSentinelUrl } from '@baton/redis-kit';
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

/**
 * Refuses a Redis transport and a Redis store on one server whose keys could meet: the bus's keys
 * start with `<BATON_REDIS_BUS_PREFIX>:`, the store's with BATON_REDIS_KEY_PREFIX, and when one
 * starts with the other, the store's clean-up of its prefix (and any SCAN of it) takes the bus's
 * keys too. Servers are compared by host, port and database (by sentinels, master and database
 * through Sentinel).
 */
export function refuseSharedRedisKeys(config: WorkerAppConfig): void {
  const bus = registrationFor('transport', config.transportUrl);
  const store = registrationFor('store', config.storeUrl);
  if (bus?.name !== 'redisBus' || store?.name !== 'redis') return;
  const busServer = redisServer(config.transportUrl);
  if (busServer === undefined || busServer !== redisServer(config.storeUrl)) return;
  const { transportPrefix, redisKeyPrefix } = namespacesInUse(config);
  if (transportPrefix === undefined || redisKeyPrefix === undefined) return;
  const busKeys = `${transportPrefix}:`;
  if (!busKeys.startsWith(redisKeyPrefix) && !redisKeyPrefix.startsWith(busKeys)) return;
  const suggestion = `${redisKeyPrefix.replace(/:$/, '').replace(/[^A-Za-z0-9_-]/g, '-') || 'baton'}-bus`;
  throw new ConfigError(
    `BATON_REDIS_BUS_PREFIX '${transportPrefix}' and BATON_REDIS_KEY_PREFIX '${redisKeyPrefix}' overlap on the same Redis ` +
      `(${busServer}): the bus's keys (${busKeys}*) and the store's (${redisKeyPrefix}*) would meet; ` +
      `give the bus a prefix of its own, e.g. BATON_REDIS_BUS_PREFIX=${suggestion} (docs/redis-only.md)`,
  );
}

/**
 * `host:port/db` of a redis:// or rediss:// URL, `sentinel <hosts>/<master>/db` of a Sentinel URL;
 * undefined for anything else.
 */
function redisServer(url: string): string | undefined {
  if (isSentinelUrl(url)) {
    try {
      const { sentinels, masterName, db } = parseSentinelUrl(url, 'BATON_*_URL');
      const hosts = sentinels.map((s) => `${s.host.toLowerCase()}:${s.port}`).sort();
      return `sentinel ${hosts.join(',')}/${masterName}/${db}`;
    } catch {
      return undefined;
    }
  }
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') return undefined;
    const db = parsed.pathname.replace(/^\//, '') || '0';
    return `${parsed.hostname.toLowerCase()}:${parsed.port || '6379'}/${db}`;
  } catch {
    return undefined;
  }
}
