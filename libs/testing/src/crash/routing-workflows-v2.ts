/**
 * The "v2 code" of the version-routing specs' worker processes (BATON_WORKFLOWS): `route_order`
 * at versions 1 and 2, as a rolling deploy's new build keeps the old version registered.
 */
import { defineWorkflow } from '@baton/core';
import { routeHold, routeOrderV1 } from './routing-workflows-v1.js';

export { routeOrderV1 };

export const routeOrderV2 = defineWorkflow({
  name: 'route_order',
  version: 2,
  run: async (ctx, input: { n: number; ms: number }) => `v2:${input.n}:${await ctx.run(routeHold, input.ms)}`,
});
