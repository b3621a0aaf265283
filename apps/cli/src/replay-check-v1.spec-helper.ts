/**
 * The code in production for the replay-check spec: a, b, then a wait for the `go` signal, then c.
 * Also the "new code" of a rollout that changes nothing.
 */
import { defineActivity, defineWorkflow } from '@baton/core';

export const rcStep = (name: string) =>
  defineActivity({ name, run: async (text: string) => `${text}>${name}` });

export const rcOrder = defineWorkflow({
  name: 'rc_cli_order',
  version: 1,
  run: async (ctx, input: string) => {
    const y = await ctx.run(rcStep('b'), await ctx.run(rcStep('a'), input));
    await ctx.waitForSignal('go');
    return ctx.run(rcStep('c'), y);
  },
});
