/**
 * The durable promise crash scenario's workflow (promise-scenario.ts), loaded by real worker
 * processes beside crash-workflow.ts: a crash chain that, after its first step, makes a durable
 * promise and awaits it beside its second step, so a run is held (a step in flight) or suspended
 * (the step done) while it waits. The promise must be resolved with `{ seed }` of the run's own
 * input: a value lost, changed or delivered to the wrong run fails the run, so the suite's outcome
 * check (the chain's value, crash-workflow.ts) also checks every completion.
 */
import { defineWorkflow, NonRetryableError } from '@baton/core';
import { applyStep, type ChainInput } from './crash-workflow.js';

/** What a run's promise must be resolved with. */
export interface Approval {
  seed: number;
}

export const crashPromised = defineWorkflow({
  name: 'crash_promised',
  version: 1,
  run: async (ctx, input: ChainInput) => {
    const delayOf = (step: number): number => input.delaysMs?.[step] ?? input.minDelayMs;
    const step = (n: number, previous: number) =>
      ctx.run(applyStep, { step: n, previous, seed: input.seed, delayMs: delayOf(n) });
    let value = await step(0, 0);
    const approval = ctx.promise<Approval>();
    const [approved, next] = await Promise.all([approval.value, step(1, value)]);
    if (approved?.seed !== input.seed) {
      throw new NonRetryableError(
        `run ${ctx.runId} (seed ${input.seed}) was resolved with ${JSON.stringify(approved)}, not its own approval`,
      );
    }
    value = next;
    for (let n = 2; n < input.steps; n++) value = await step(n, value);
    return value;
  },
});
