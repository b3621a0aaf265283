/**
 * Rate limits on real worker processes: never more step starts per window than the limit,
 * fleet-wide, and every run completed once, while workers with a limited step in flight are
 * SIGKILLed, on NATS with Redis and Kafka with Postgres (each store's token script once; the store
 * conformance suite covers the limits on every store)
 * (libs/testing/src/crash/rate-limit-scenario.ts).
 */
import { describeRateLimitCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeRateLimitCrash('nats+redis', crashEnvironment('redis'));
describeRateLimitCrash('kafka+postgres', crashEnvironment('postgres', 'kafka'));
