/**
 * The workflows dashboard.int.spec.ts runs on a real worker process (BATON_WORKFLOWS names this
 * module): steps that succeed or fail on request, and a run that waits for a signal, so that a
 * worker's /metrics holds completed, failed and cancelled runs and ok and error steps.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineWorkflow } from '@baton/core';

export interface DashboardStepsInput {
  steps: number;
  delayMs: number;
  /** The step (from 0) that throws; its one attempt fails the run. */
  failAt?: number;
}

const dashStep = defineActivity({
  name: 'dash_step',
  retry: { maxAttempts: 1 },
  run: async (input: { step: number; delayMs: number; fail: boolean }, io) => {
    await sleep(input.delayMs, undefined, { signal: io.signal }).catch((err: unknown) => {
      throw io.signal.aborted ? io.signal.reason : err;
    });
    if (input.fail) throw new Error(`step ${input.step} fails on request`);
    return input.step;
  },
});

export const dashSteps = defineWorkflow({
  name: 'dash_steps',
  version: 1,
  run: async (ctx, input: DashboardStepsInput) => {
    let total = 0;
    for (let step = 0; step < input.steps; step++) {
      total += await ctx.run(dashStep, { step, delayMs: input.delayMs, fail: step === input.failAt });
    }
    return total;
  },
});

/** Waits for the signal `go` (the spec cancels it instead). */
export const dashWait = defineWorkflow({
  name: 'dash_wait',
  version: 1,
  run: async (ctx) => ctx.waitForSignal<null>('go'),
});
