/**
 * Build v2 of the rollout scenario (rollout-scenario.ts): `rollout_order` version 1 kept, changed
 * in place with `ctx.patched` (a receipt after the last step, for runs that reach that point on
 * this build), and version 2 added (the same shape, other values).
 */
import { defineWorkflow } from '@baton/core';
import {
  ROLLOUT_PATCH,
  ROLLOUT_WORKFLOW,
  rolloutReceipt,
  rolloutOrderSteps,
  type RolloutInput,
} from './rollout-workflows.js';

export const rolloutOrderV1Patched = defineWorkflow({
  name: ROLLOUT_WORKFLOW,
  version: 1,
  run: async (ctx, input: RolloutInput) => {
    const second = await rolloutOrderSteps(ctx, input, 1);
    if (ctx.patched(ROLLOUT_PATCH)) await ctx.run(rolloutReceipt, { seed: input.seed });
    return `v1:${second}`;
  },
});

export const rolloutOrderV2 = defineWorkflow({
  name: ROLLOUT_WORKFLOW,
  version: 2,
  run: async (ctx, input: RolloutInput) => {
    const second = await rolloutOrderSteps(ctx, input, 2);
    return `v2:${second}`;
  },
});
