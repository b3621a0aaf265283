/**
 * The workflows the console's end-to-end spec runs on real worker processes (BATON_WORKFLOWS
 * names this module): a chain of slow steps (a run to SIGKILL mid-way, or to filter for), and a
 * run that waits for a signal (a run to cancel, or to be refused an action in read-only mode), and
 * a run whose one step fails every attempt (the metrics spec).
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

const consoleFailingStep = defineActivity({
  name: 'console_failing_step',
  retry: { maxAttempts: 2, initialDelayMs: 10, maxDelayMs: 10 },
  run: async (input: { why: string }) => {
    throw new Error(`console_failing_step fails on purpose: ${input.why}`);
  },
});

/** One step that fails both its attempts, so the run fails (the metrics spec counts both). */
export const consoleFail = defineWorkflow({
  name: 'console_fail',
  version: 1,
  run: async (ctx, input: { why: string }) => ctx.run(consoleFailingStep, input),
});
