/**
 * Build v1 of the rollout scenario (rollout-scenario.ts): `rollout_order` version 1 only.
 * step 0 -> a durable sleep or a wait for the `approve` signal -> step 1.
 */
import { defineWorkflow } from '@baton/core';
import { ROLLOUT_WORKFLOW, rolloutOrderSteps, type RolloutInput } from './rollout-workflows.js';

export const rolloutOrderV1 = defineWorkflow({
  name: ROLLOUT_WORKFLOW,
  version: 1,
  run: async (ctx, input: RolloutInput) => {
    const second = await rolloutOrderSteps(ctx, input, 1);
    return `v1:${second}`;
  },
});
