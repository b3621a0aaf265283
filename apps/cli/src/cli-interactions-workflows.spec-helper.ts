/**
 * The workflow cli-interactions.int.spec.ts runs on real worker processes (BATON_WORKFLOWS names
 * this module): an order that sets a search attribute, takes items by update (`add`, answered at
 * once, and `slow`, whose step waits until a file exists, so a spec can see an update under way),
 * and waits for its approval on a durable promise.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineWorkflow } from '@baton/core';

const waitForFile = defineActivity({
  name: 'cli_wait_for_file',
  run: async (file: string, io) => {
    while (!existsSync(file)) await sleep(50, undefined, { signal: io.signal });
    return file.length;
  },
});

export const cliApproval = defineWorkflow({
  name: 'cli_approval',
  version: 1,
  run: async (ctx, input: { customer: string }) => {
    let total = 0;
    ctx.onUpdate('add', (n: number) => (total += n));
    ctx.onUpdate('slow', (file: string) => ctx.run(waitForFile, file));
    await ctx.setAttributes({ customerId: input.customer });
    const approval = ctx.promise<{ by: string }>({ timeout: '1h' });
    const { by } = await approval.value;
    return { total, by };
  },
});
