/**
 * A workflow module for the fleet specs' worker processes (BATON_WORKFLOWS): two versions of one
 * workflow and one of another, so a listing shows exactly which versions a worker registers, and
 * a slow activity, so a run is held long enough to be counted.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineWorkflow } from '@baton/core';

const hold = defineActivity({
  name: 'fleet_hold',
  run: async (ms: number, io) => {
    await sleep(ms, undefined, { signal: io.signal });
    return ms;
  },
});

export const fleetOrdersV1 = defineWorkflow({
  name: 'fleet_orders',
  version: 1,
  run: async (ctx, ms: number) => ctx.run(hold, ms),
});

export const fleetOrdersV2 = defineWorkflow({
  name: 'fleet_orders',
  version: 2,
  run: async (ctx, ms: number) => ctx.run(hold, ms),
});

export const fleetRefunds = defineWorkflow({
  name: 'fleet_refunds',
  version: 1,
  run: async () => 'refunded',
});
