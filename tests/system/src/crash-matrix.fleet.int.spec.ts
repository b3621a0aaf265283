/**
 * The crash matrix: the crash suite's faults (`describeCrashSuite`, libs/testing/src/crash/crash-suite.ts:
 * SIGKILLs every 1-2 s, a zombie frozen past its lease, server restarts) on every registered bus
 * with every registered store, the pairs taken from the adapter registry (`registeredPairs`)
 * rather than a file per pair. Their checks are outcomes only, so this file runs beside another
 * (`paired` project, vitest.projects.ts); the SIGTERM hand-off, which is timed, is
 * crash-sigterm.serial.int.spec.ts.
 *
 * On Kafka every SIGKILL and every replacement changes the consumer group: the suite runs through
 * a rebalance per kill, with runs in flight on the partitions that move. On Redis alone (the Redis
 * transport and the Redis store on one server, each under its own prefix, as a Redis-only team runs
 * them, docs/redis-only.md) there is no outage test: it would cost CI minutes the suite does not
 * have (the NATS+Redis pair restarts a private Redis already).
 */
import type { CrashSuiteOptions } from '@baton/testing/crash';
import { describeCrashSuite } from '@baton/testing/crash';
import { crashEnvironment, registeredPairs } from './crash-environment.spec-helper.js';

/**
 * What a pair adds to the suite: outage scenarios restart a private server (NATS, Redis) under
 * the fleet. The shared Kafka broker is never restarted by a test; with Redis the Kafka pair runs
 * grouped runs (group commit, the default with Redis) through a Redis restart.
 */
const PAIR_OPTIONS: Record<string, CrashSuiteOptions> = {
  'nats+redis': { outages: ['nats', 'redis'] },
  'kafka+redis': { outages: ['redis'] },
};

for (const { pair, bus, store } of registeredPairs()) {
  describeCrashSuite(pair, crashEnvironment(store, bus), PAIR_OPTIONS[pair] ?? {});
}
