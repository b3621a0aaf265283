/**
 * The first build of the dead-lettered-child spec's worker processes (BATON_WORKFLOWS):
 * `dc_parent` and `dc_big_parent` start children of `dc_child@1`, which this build does not
 * register (dead-child-workflows-fixed.ts does). `dc_big_parent`'s child input is sent inline, so a
 * worker with a small BATON_MAX_MESSAGE_BYTES dead-letters its start `too-large`. Neither parent
 * catches the child's failure: it fails with it.
 */
import { defineWorkflow } from '@baton/core';

/**
 * The parents' reference to the child (its name and version): not exported, so this build does
 * not register it. The fixed build registers its own definition of `dc_child@1`.
 */
const dcChild = defineWorkflow({
  name: 'dc_child',
  version: 1,
  run: async (_ctx, input: { n: number; pad?: string }) => ({ n: input.n, size: input.pad?.length ?? 0 }),
});

export const dcParent = defineWorkflow({
  name: 'dc_parent',
  version: 1,
  run: async (ctx, n: number) => ctx.executeChild(dcChild, { n }),
});

export const dcBigParent = defineWorkflow({
  name: 'dc_big_parent',
  version: 1,
  run: async (ctx, input: { n: number; size: number }) =>
    ctx.executeChild(dcChild, { n: input.n, pad: 'x'.repeat(input.size) }),
});
