/**
 * The SIGTERM hand-off (`describeSigtermHandOff`, libs/testing/src/crash/crash-suite.ts) on every
 * registered bus with every registered store (`registeredPairs`), and with pipelined steps on
 * NATS + Redis, whose hand-off flushes entries that ran ahead of the journal. Its check is timed
 * (nothing started 500 ms after the signal), so this file runs alone (`serial` project,
 * vitest.projects.ts); the crash suite's other faults are crash-matrix.fleet.int.spec.ts.
 *
 * Variants that only sign the journal or group it are left out: what a hand-off writes (a
 * checkpoint, the journal's flush) their SIGKILL and zombie tests put through the chain and the
 * group log as well.
 */
import { describeSigtermHandOff } from '@baton/testing/crash';
import { crashEnvironment, registeredPairs } from './crash-environment.spec-helper.js';

for (const { pair, bus, store } of registeredPairs()) {
  describeSigtermHandOff(pair, crashEnvironment(store, bus));
}
describeSigtermHandOff(
  'nats+redis, pipelined steps',
  crashEnvironment('redis', 'nats', { BATON_PIPELINE_STEPS: 'true' }),
);
