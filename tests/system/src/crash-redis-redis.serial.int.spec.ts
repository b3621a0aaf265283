/**
 * The crash suite on Redis alone: the Redis transport (BullMQ queue, journal streams) and the
 * Redis store on the same server, each under its own prefix, as a Redis-only team runs them
 * (docs/redis-only.md). No outage test: it would cost CI minutes the suite does not have
 * (the NATS+Redis pair restarts a private Redis already).
 */
import { describeCrashSuite } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeCrashSuite('redis+redis', crashEnvironment('redis', 'redis'));
