/**
 * A build that registers only `route_wait@2` (no version 1 of anything), for the version-routing
 * spec's fleet that stays mixed: its runs wait for a signal, so their wakes travel the run queue
 * and may land on a worker without the version.
 */
import { defineWorkflow } from '@baton/core';

export const routeWaitV2 = defineWorkflow({
  name: 'route_wait',
  version: 2,
  run: async (ctx, n: number) => `waited:${n}:${await ctx.waitForSignal<string>('go')}`,
});
