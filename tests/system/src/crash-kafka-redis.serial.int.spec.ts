import { describeCrashSuite } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

// Every SIGKILL and every replacement changes the consumer group: the suite runs through a
// rebalance per kill, with runs in flight on the partitions that move. Runs are grouped (group
// commit, the default with Redis); the shared Kafka broker is never restarted by a test, Redis is.
describeCrashSuite('kafka+redis', crashEnvironment('redis', 'kafka'), { outages: ['redis'] });
