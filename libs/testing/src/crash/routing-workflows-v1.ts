/**
 * The "v1 code" of the version-routing specs' worker processes (BATON_WORKFLOWS): `route_order`
 * at version 1 only. routing-workflows-v2.ts is the next build, with versions 1 and 2.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineWorkflow } from '@baton/core';

/** A short activity, so runs are in flight while workers come and go. */
export const routeHold = defineActivity({
  name: 'route_hold',
  run: async (ms: number, io) => {
    await sleep(ms, undefined, { signal: io.signal });
    return ms;
  },
});

export const routeOrderV1 = defineWorkflow({
  name: 'route_order',
  version: 1,
  run: async (ctx, input: { n: number; ms: number }) => `v1:${input.n}:${await ctx.run(routeHold, input.ms)}`,
});
