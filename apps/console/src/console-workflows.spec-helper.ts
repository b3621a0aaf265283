/**
 * The workflows the console's end-to-end spec runs on real worker processes (BATON_WORKFLOWS
 * names this module): a chain of slow steps (a run to SIGKILL mid-way, or to filter for), and a
 * run that waits for a signal (a run to cancel, or to be refused an action in read-only mode).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineWorkflow } from '@baton/core';

const consoleStep = defineActivity({
  name: 'console_step',
  retry: { maxAttempts: 1 },
  run: async (input: { step: number; delayMs: number }, io) => {
    await sleep(input.delayMs, undefined, { signal: io.signal }).catch((err: unknown) => {
      throw io.signal.aborted ? io.signal.reason : err;
    });
    return input.step * 10;
  },
});

export const consoleSteps = defineWorkflow({
  name: 'console_steps',
  version: 1,
  run: async (ctx, input: { steps: number; delayMs: number }) => {
    let total = 0;
    for (let step = 0; step < input.steps; step++)
      total += await ctx.run(consoleStep, { step, delayMs: input.delayMs });
    return total;
  },
});

/** Waits for the signal `go` (forever), then returns its payload. */
export const consoleWait = defineWorkflow({
  name: 'console_wait',
  version: 1,
  run: async (ctx, _input: { note: string }) => ctx.waitForSignal<unknown>('go'),
});
