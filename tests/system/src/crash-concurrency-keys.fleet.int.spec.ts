/**
 * Concurrency per key on real worker processes: never more than the limit of one customer's runs
 * at once, every run completed once, while slot holders are SIGKILLed, on NATS with Redis and Kafka
 * with Postgres (each bus and each store once; the store conformance suite covers the slots on
 * every store)
 * (libs/testing/src/crash/concurrency-key-scenario.ts).
 */
import { describeConcurrencyKeyCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeConcurrencyKeyCrash('nats+redis', crashEnvironment('redis'));
describeConcurrencyKeyCrash('kafka+postgres', crashEnvironment('postgres', 'kafka'));
