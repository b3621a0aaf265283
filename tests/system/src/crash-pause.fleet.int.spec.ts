/**
 * Pausing on real worker processes: a run pauses after its in-flight activity is journaled, and stays
 * paused across the SIGKILL of its owner, on NATS with Redis and on Kafka with Postgres: each store's
 * pause and each bus's redelivery once (libs/testing/src/crash/pause-scenario.ts). NATS with Postgres
 * adds no path of its own and was dropped to keep CI inside its time.
 */
import { describePauseCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

// The two pairs at once (each pair's tests in order): see PauseCrashOptions.besideOtherPairs.
describePauseCrash('nats+redis', crashEnvironment('redis'), { besideOtherPairs: true });
describePauseCrash('kafka+postgres', crashEnvironment('postgres', 'kafka'), { besideOtherPairs: true });
