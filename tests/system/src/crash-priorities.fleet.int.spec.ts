/**
 * The crash scenario for run priorities (low backlog, high runs behind it, a worker busy with a
 * high run SIGKILLed), on NATS + Redis, Kafka + Postgres and Redis + Redis.
 */
import { describePriorityCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describePriorityCrash('nats+redis', crashEnvironment('redis', 'nats', { BATON_NATS_PRIORITY_LANES: 'true' }));
describePriorityCrash(
  'kafka+postgres',
  crashEnvironment('postgres', 'kafka', { BATON_KAFKA_PRIORITY_LANES: 'true' }),
);
describePriorityCrash(
  'redis+redis',
  crashEnvironment('redis', 'redis', { BATON_REDIS_BUS_PRIORITY_LANES: 'true' }),
);
