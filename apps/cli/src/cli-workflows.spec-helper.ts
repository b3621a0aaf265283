/**
 * The workflows the CLI's integration spec runs on real worker processes (BATON_WORKFLOWS names
 * this module): a chain of steps that can be made to fail until a file exists, so a spec can fail
 * runs, "fix" them by creating the file, and retry them in bulk.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineQuery, defineWorkflow } from '@baton/core';

export interface StepsInput {
  steps: number;
  delayMs: number;
  /** Every step fails (one attempt) while this file does not exist. */
  fixedWhen?: string;
}

const cliStep = defineActivity({
  name: 'cli_step',
  retry: { maxAttempts: 1 },
  run: async (input: { step: number; delayMs: number; fixedWhen?: string }, io) => {
    await sleep(input.delayMs, undefined, { signal: io.signal }).catch((err: unknown) => {
      throw io.signal.aborted ? io.signal.reason : err;
    });
    if (input.fixedWhen !== undefined && !existsSync(input.fixedWhen))
      throw new Error(`not fixed yet: ${input.fixedWhen} does not exist`);
    return input.step;
  },
});

export const cliSteps = defineWorkflow({
  name: 'cli_steps',
  version: 1,
  run: async (ctx, input: StepsInput) => {
    let total = 0;
    for (let step = 0; step < input.steps; step++) {
      total += await ctx.run(cliStep, {
        step,
        delayMs: input.delayMs,
        ...(input.fixedWhen !== undefined && { fixedWhen: input.fixedWhen }),
      });
    }
    return total;
  },
});

/**
 * Sleeps a little (a timer on the timeline), then waits for the signal `go` and returns its payload;
 * meanwhile it answers the update `note` (a non-empty string) with how many notes it has, and
 * its query `stage` says which wait it is in (`runs query`).
 */
export const cliWait = defineWorkflow({
  name: 'cli_wait',
  version: 1,
  run: async (ctx, input: { sleepMs: number }) => {
    const notes: string[] = [];
    ctx.onUpdate(
      'note',
      (text: string) => {
        notes.push(text);
        return notes.length;
      },
      {
        validate: (text) => {
          if (typeof text !== 'string' || text === '') throw new Error('a note is a non-empty string');
        },
      },
    );
    let stage = 'sleeping';
    ctx.onQuery(defineQuery<string>('stage'), () => stage);
    await ctx.sleep(input.sleepMs);
    stage = 'waiting for go';
    return ctx.waitForSignal<{ answer: number }>('go');
  },
});

/** Starts a `cli_wait` child and returns its result: `runs describe` links the two. */
export const cliParent = defineWorkflow({
  name: 'cli_parent',
  version: 1,
  run: async (ctx, input: { sleepMs: number }) => ctx.executeChild(cliWait, input),
});
