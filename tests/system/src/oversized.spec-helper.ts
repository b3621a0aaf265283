/** A workflow whose one activity returns more than a small bus accepts: loaded by a worker process. */
import { defineActivity, defineWorkflow } from '@baton/core';

const produce = defineActivity({
  name: 'produce',
  run: async (bytes: number) => 'x'.repeat(bytes),
});

export const oversized = defineWorkflow({
  name: 'oversized',
  version: 1,
  run: async (ctx, bytes: number) => (await ctx.run(produce, bytes)).length,
});

/** Takes an input of any size and returns its length. */
export const inputLength = defineWorkflow({
  name: 'input_length',
  version: 1,
  run: async (_ctx, input: string) => input.length,
});
