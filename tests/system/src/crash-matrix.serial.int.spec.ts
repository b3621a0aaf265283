/**
 * The crash matrix: the crash suite (`describeCrashSuite`, libs/testing/src/crash/crash-suite.ts)
 * on every registered bus with every registered store, the pairs taken from the adapter registry
 * (`ADAPTERS` in @baton/host) rather than a file per pair, so a new transport or store is crashed
 * with every partner as soon as it is registered, and fails here, naming what to add, until its
 * test server is known.
 *
 * On Kafka every SIGKILL and every replacement changes the consumer group: the suite runs through
 * a rebalance per kill, with runs in flight on the partitions that move. On Redis alone (the Redis
 * transport and the Redis store on one server, each under its own prefix, as a Redis-only team runs
 * them, docs/redis-only.md) there is no outage test: it would cost CI minutes the suite does not
 * have (the NATS+Redis pair restarts a private Redis already).
 */
import type { CrashSuiteOptions } from '@baton/testing/crash';
import { describeCrashSuite } from '@baton/testing/crash';
import { ADAPTERS } from '@baton/host';
import { crashEnvironment, type BusKind, type StoreKind } from './crash-environment.spec-helper.js';

/** How the crash environment names each registered adapter's test server. */
const BUSES: Record<string, BusKind> = { nats: 'nats', kafka: 'kafka', redisBus: 'redis' };
const STORES: Record<string, StoreKind> = { redis: 'redis', postgres: 'postgres' };

/**
 * What a pair adds to the suite: outage scenarios restart a private server (NATS, Redis) under
 * the fleet. The shared Kafka broker is never restarted by a test; with Redis the Kafka pair runs
 * grouped runs (group commit, the default with Redis) through a Redis restart.
 */
const PAIR_OPTIONS: Record<string, CrashSuiteOptions> = {
  'nats+redis': { outages: ['nats', 'redis'] },
  'kafka+redis': { outages: ['redis'] },
};

for (const bus of ADAPTERS.filter((r) => r.kind === 'transport')) {
  const busKind = BUSES[bus.name];
  if (busKind === undefined) {
    throw new Error(`the crash matrix has no test server for the bus '${bus.name}': add it to BUSES`);
  }
  for (const store of ADAPTERS.filter((r) => r.kind === 'store')) {
    const storeKind = STORES[store.name];
    if (storeKind === undefined) {
      throw new Error(`the crash matrix has no test server for the store '${store.name}': add it to STORES`);
    }
    const pair = `${busKind}+${storeKind}`;
    describeCrashSuite(pair, crashEnvironment(storeKind, busKind), PAIR_OPTIONS[pair] ?? {});
  }
}
