/**
 * Child workflows on real worker processes: parents and children complete, each child started once
 * and each step applied once, while the worker starting a parent's children and a worker running
 * children's steps are SIGKILLed, on NATS with Redis and Kafka with Postgres (each bus and each
 * store once; passed on nats+postgres and kafka+redis too when it was written)
 * (libs/testing/src/crash/child-scenario.ts).
 */
import { describeChildCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeChildCrash('nats+redis', crashEnvironment('redis'));
describeChildCrash('kafka+postgres', crashEnvironment('postgres', 'kafka'));
