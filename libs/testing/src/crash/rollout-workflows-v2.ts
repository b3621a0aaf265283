/**
 * Build v2 of the rollout scenario (rollout-scenario.ts): `rollout_order` version 1 kept, changed
 * in place with `ctx.patched` (a receipt after the last step, for runs that reach that point on
 * this build), and version 2 added (the same shape, other values).
 */
import { defineWorkflow } from '@baton/core';
import {
  ROLLOUT_PATCH,
  ROLLOUT_SIGNAL,
  ROLLOUT_WORKFLOW,
  rolloutReceipt,
  rolloutStep,
  type RolloutInput,
} from './rollout-workflows.js';

export const rolloutOrderV1Patched = defineWorkflow({
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
    if (ctx.patched(ROLLOUT_PATCH)) await ctx.run(rolloutReceipt, { seed });
    return `v1:${second}`;
  },
});

export const rolloutOrderV2 = defineWorkflow({
  name: ROLLOUT_WORKFLOW,
  version: 2,
  run: async (ctx, input: RolloutInput) => {
    const { seed, stepMs: delayMs } = input;
    const first = await ctx.run(rolloutStep, { step: 0, previous: 0, seed, version: 2, delayMs });
    let between = 0;
    if (input.wait === 'sleep') await ctx.sleep(input.sleepMs);
    else between = await ctx.waitForSignal<number>(ROLLOUT_SIGNAL);
    const second = await ctx.run(rolloutStep, {
      step: 1,
      previous: first + between,
      seed,
      version: 2,
      delayMs,
    });
    return `v2:${second}`;
  },
});
