/**
 * The crash scenario for values with no JSON form (an activity returning a BigInt), with a
 * SIGKILL in the middle, on NATS + Redis and Kafka + Postgres.
 */
import { describeUnencodableCrash } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeUnencodableCrash('nats+redis', crashEnvironment('redis'));
describeUnencodableCrash('kafka+postgres', crashEnvironment('postgres', 'kafka'));
