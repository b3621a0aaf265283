/**
 * Run streams on real worker processes (libs/testing/src/crash/stream-scenario.ts): a worker
 * SIGKILLed mid-stream, readers disconnecting and resuming, every item read once in order, on each
 * bus: NATS (with Redis), Kafka (with Postgres, the bus without optimistic append: the fence
 * record's path) and the Redis bus.
 */
import { describeStreamCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeStreamCrash('nats+redis', crashEnvironment('redis'));
describeStreamCrash('kafka+postgres', crashEnvironment('postgres', 'kafka'));
describeStreamCrash('redis+redis', crashEnvironment('redis', 'redis'));
