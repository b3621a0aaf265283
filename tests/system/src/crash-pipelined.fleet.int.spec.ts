/**
 * The crash suite with pipelined steps on (BATON_PIPELINE_STEPS=true): idempotent steps run ahead
 * of their journal entries, so a SIGKILL may lose entries that were not durable yet. The same
 * invariants must hold: every run ends with the right output, each step's effect is applied once
 * (the ledger keys effects by idempotency key), no step runs again after its completion was
 * journaled, and fencing holds. Its SIGTERM hand-off is crash-sigterm.serial.int.spec.ts's.
 */
import { describeCrashSuite } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

describeCrashSuite(
  'nats+redis, pipelined steps',
  crashEnvironment('redis', 'nats', { BATON_PIPELINE_STEPS: 'true' }),
);
