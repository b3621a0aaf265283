/**
 * The fixed build of the dead-lettered-child spec's worker processes (BATON_WORKFLOWS): the first
 * build's parents, and `dc_child@1`, which the first build lacks.
 */
import { defineWorkflow } from '@baton/core';

export { dcBigParent, dcParent } from './dead-child-workflows.js';

export const dcChild = defineWorkflow({
  name: 'dc_child',
  version: 1,
  run: async (_ctx, input: { n: number; pad?: string }) => ({ n: input.n, size: input.pad?.length ?? 0 }),
});
