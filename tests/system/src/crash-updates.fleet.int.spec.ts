/**
 * Updates on real worker processes: the owner of a run SIGKILLed between an update's acceptance
 * and its answer, on NATS with Redis and on Kafka with Postgres (each store's updates and each
 * bus's redelivery once; libs/testing/src/crash/update-scenario.ts): the update is applied once
 * in effect, the caller's repeat with the same update id gets the kept answer, the run completes.
 */
import { describeUpdateCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeUpdateCrash('nats+redis', crashEnvironment('redis'));
describeUpdateCrash('kafka+postgres', crashEnvironment('postgres', 'kafka'));
