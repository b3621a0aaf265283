/** The "new code" of the replay-check spec: step b renamed without a patch or a new version. */
import { defineWorkflow } from '@baton/core';
import { rcStep } from './replay-check-v1.spec-helper.js';

export const rcOrderRenamed = defineWorkflow({
  name: 'rc_cli_order',
  version: 1,
  run: async (ctx, input: string) => {
    const y = await ctx.run(rcStep('b_renamed'), await ctx.run(rcStep('a'), input));
    await ctx.waitForSignal('go');
    return ctx.run(rcStep('c'), y);
  },
});
