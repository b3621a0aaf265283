/**
 * Durable promises on real worker processes: runs awaiting their promises, their worker SIGKILLed,
 * every promise resolved while nobody runs them (two runs paused first), every run completed with
 * its own approval and every effect applied once, on NATS with Redis and on Kafka with Postgres:
 * each store's completion script or function and each bus's wake once
 * (libs/testing/src/crash/promise-scenario.ts). Outcomes only, no timing: the paired project.
 */
import { describePromiseCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describePromiseCrash('nats+redis', crashEnvironment('redis'));
describePromiseCrash('kafka+postgres', crashEnvironment('postgres', 'kafka'));
