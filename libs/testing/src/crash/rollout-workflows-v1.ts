/**
 * Build v1 of the rollout scenario (rollout-scenario.ts): `rollout_order` version 1 only.
 * step 0 -> a durable sleep or a wait for the `approve` signal -> step 1.
 */
import { defineWorkflow } from '@baton/core';
import { ROLLOUT_SIGNAL, ROLLOUT_WORKFLOW, rolloutStep, type RolloutInput } from './rollout-workflows.js';

export const rolloutOrderV1 = defineWorkflow({
  name: ROLLOUT_WORKFLOW,
  version: 1,
  run: async (ctx, input: RolloutInput) => {
    const { seed, stepMs: delayMs } = input;
    const first = await ctx.run(rolloutStep, { step: 0, previous: 0, seed, version: 1, delayMs });
    let between = 0;
    if (input.wait === 'sleep') await ctx.sleep(input.sleepMs);
    else between = await ctx.waitForSignal<number>(ROLLOUT_SIGNAL);
    const second = await ctx.run(rolloutStep, {
      step: 1,
      previous: first + between,
      seed,
      version: 1,
      delayMs,
    });
    return `v1:${second}`;
  },
});
