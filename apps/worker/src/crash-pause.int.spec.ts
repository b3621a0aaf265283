/**
 * Pausing on real worker processes: a run pauses after its in-flight activity is journaled, and stays
 * paused across the SIGKILL of its owner, on NATS with Redis and with Postgres,
 * and on Kafka with Postgres (libs/testing/src/crash/pause-scenario.ts).
 */
import { describePauseCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describePauseCrash('nats+redis', crashEnvironment('redis'));
describePauseCrash('nats+postgres', crashEnvironment('postgres'));
describePauseCrash('kafka+postgres', crashEnvironment('postgres', 'kafka'));
