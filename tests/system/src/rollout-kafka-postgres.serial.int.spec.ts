/**
 * A rolling update v1 -> v2 -> v3 under load on real worker processes, on kafka with postgres
 * (libs/testing/src/crash/rollout-scenario.ts).
 */
import { describeRollout } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeRollout('kafka+postgres', crashEnvironment('postgres', 'kafka'));
