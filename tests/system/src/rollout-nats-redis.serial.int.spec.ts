/**
 * A rolling update v1 -> v2 -> v3 under load on real worker processes, on nats with redis
 * (libs/testing/src/crash/rollout-scenario.ts).
 */
import { describeRollout } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeRollout('nats+redis', crashEnvironment('redis'));
