/**
 * Schedules on real worker processes: each due time of a schedule starts exactly one run while the
 * worker firing it is SIGKILLed, and the due times missed while the whole fleet was down are
 * caught up, on NATS with Redis and on Kafka with Postgres (libs/testing/src/crash/schedule-scenario.ts).
 */
import { describeScheduleCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeScheduleCrash('nats+redis', crashEnvironment('redis'));
describeScheduleCrash('kafka+postgres', crashEnvironment('postgres', 'kafka'));
