/**
 * Compile-time tests of the typed client (run by vitest's typecheck mode, see vitest.config.ts).
 * Each `@ts-expect-error` must stay an error: if a change lets the wrong call compile, tsc reports
 * the directive as unused (TS2578) and the test fails.
 */
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineSignal, defineWorkflow, type WorkflowInput, type WorkflowOutput } from '@baton/core';
import type { Client, ReplayCheckReport, RunDeletion, RunHandle } from './index.js';

interface Decision {
  approved: boolean;
  score: number;
}

const humanReview = defineSignal<boolean>('human_review');

const loanApproval = defineWorkflow({
  name: 'loan_approval',
  version: 1,
  run: async (ctx, input: { applicantId: string }): Promise<Decision> => {
    const approved = await ctx.waitForSignal(humanReview);
    expectTypeOf(approved).toEqualTypeOf<boolean>();
    return { approved, score: input.applicantId.length };
  },
});

declare const client: Client;

/** A loop that continues as new until it is done: its result type leaves ContinueAsNew out. */
const countdown = defineWorkflow({
  name: 'countdown',
  version: 1,
  run: async (ctx, input: { left: number }) => {
    if (input.left > 0) return ctx.continueAsNew({ left: input.left - 1 });
    return 'lift-off' as const;
  },
});

describe('client.start with a workflow definition', () => {
  it('takes the workflow input type and returns a handle of its output type', async () => {
    const run = await client.start(loanApproval, { applicantId: 'A-7291' });
    expectTypeOf(run).toEqualTypeOf<RunHandle<Decision>>();
    expectTypeOf(await run.result()).toEqualTypeOf<Decision>();
    expectTypeOf<WorkflowInput<typeof loanApproval>>().toEqualTypeOf<{ applicantId: string }>();
    expectTypeOf<WorkflowOutput<typeof loanApproval>>().toEqualTypeOf<Decision>();
  });

  it("resolves a workflow that continues as new to its last run's result type", async () => {
    const run = await client.start(countdown, { left: 3 });
    expectTypeOf(await run.result()).toEqualTypeOf<'lift-off'>();
    expectTypeOf<WorkflowOutput<typeof countdown>>().toEqualTypeOf<'lift-off'>();
  });

  it('refuses an input of the wrong type', async () => {
    // @ts-expect-error applicantId must be a string
    await client.start(loanApproval, { applicantId: 7291 });
    // @ts-expect-error a required field is missing
    await client.start(loanApproval, {});
    // @ts-expect-error an unknown field (excess property check on the literal)
    await client.start(loanApproval, { applicantId: 'A', extra: true });
    // @ts-expect-error the input is not optional
    await client.start(loanApproval);
  });

  it('refuses to use the result as another type', async () => {
    const run = await client.start(loanApproval, { applicantId: 'A-7291' });
    const decision = await run.result();
    // @ts-expect-error score is a number
    const score: string = decision.score;
    void score;
    // @ts-expect-error no such field on the output
    void decision.reason;
  });

  it('accepts explicit type arguments that agree with the definition', async () => {
    const run = await client.start<{ applicantId: string }, Decision>(loanApproval, { applicantId: 'A' });
    expectTypeOf(run).toEqualTypeOf<RunHandle<Decision>>();
  });

  it('types fork and retry handles by the workflow of the run they came from', async () => {
    const run = await client.start(loanApproval, { applicantId: 'A-7291' });
    expectTypeOf(await run.fork({ fromCheckpoint: 1 })).toEqualTypeOf<RunHandle<Decision>>();
    expectTypeOf(await run.retry()).toEqualTypeOf<RunHandle<Decision>>();
    expectTypeOf(await client.timeTravel.fork('r1', { fromCheckpoint: 1 })).toEqualTypeOf<
      RunHandle<unknown>
    >();
    expectTypeOf(await client.timeTravel.retry<Decision>('r1')).toEqualTypeOf<RunHandle<Decision>>();
  });
});

describe('client.handle', () => {
  it('is typed by a workflow definition given beside the run id', async () => {
    const typed = client.handle('r1', loanApproval);
    expectTypeOf(typed).toEqualTypeOf<RunHandle<Decision>>();
    expectTypeOf(await typed.result()).toEqualTypeOf<Decision>();
  });

  it('is unknown without one, or the type argument', async () => {
    expectTypeOf(await client.handle('r1').result()).toEqualTypeOf<unknown>();
    expectTypeOf(client.handle<Decision>('r1')).toEqualTypeOf<RunHandle<Decision>>();
    expectTypeOf(await client.result('r1')).toEqualTypeOf<unknown>();
  });
});

describe('client.start by { name, version }', () => {
  it('takes any input and gives an unknown result without type arguments', async () => {
    const run = await client.start({ name: 'loan_approval', version: 1 }, { anything: 1 });
    expectTypeOf(await run.result()).toEqualTypeOf<unknown>();
  });

  it('checks the input against explicit type arguments', async () => {
    const ref = { name: 'loan_approval', version: 1 };
    const run = await client.start<{ applicantId: string }, Decision>(ref, { applicantId: 'A' });
    expectTypeOf(await run.result()).toEqualTypeOf<Decision>();
    // @ts-expect-error applicantId must be a string
    await client.start<{ applicantId: string }, Decision>(ref, { applicantId: 1 });
  });

  it('does not let a definition escape its input check through type arguments', async () => {
    // @ts-expect-error explicit arguments do not override the definition's own input type
    await client.start<{ other: number }, Decision>(loanApproval, { other: 1 });
    // @ts-expect-error nor widen it to a type the workflow cannot take
    await client.start<object, Decision>(loanApproval, {});
  });
});

describe('client.signal', () => {
  it('checks the payload of a defined signal', async () => {
    await client.signal('r1', humanReview, true);
    // @ts-expect-error the payload of human_review is a boolean
    await client.signal('r1', humanReview, 'yes');
    // @ts-expect-error the payload of a defined signal is required
    await client.signal('r1', humanReview);
  });

  it('keeps accepting a plain name with any payload', async () => {
    await client.signal('r1', 'human_review', { any: 'thing' });
    await client.signal('r1', 'human_review');
  });
});

describe('a signal with a schema', () => {
  const approval = defineSignal('approval', {
    schema: z.object({ approved: z.boolean(), at: z.string().transform((t) => new Date(t)) }),
  });
  it('is sent as the schema input and received as its output', async () => {
    await client.signal('r1', approval, { approved: true, at: '2026-01-01' });
    // @ts-expect-error approved is a boolean
    await client.signal('r1', approval, { approved: 'no', at: '2026-01-01' });
    defineWorkflow({
      name: 'approves',
      version: 1,
      run: async (ctx) => {
        expectTypeOf(await ctx.waitForSignal(approval)).toEqualTypeOf<{ approved: boolean; at: Date }>();
      },
    });
  });
});

describe('ctx.waitForSignal', () => {
  it('resolves to the signal payload type, and unknown for a plain name', () => {
    defineWorkflow({
      name: 'waits',
      version: 1,
      run: async (ctx) => {
        expectTypeOf(await ctx.waitForSignal(humanReview)).toEqualTypeOf<boolean>();
        expectTypeOf(await ctx.waitForSignal('plain')).toEqualTypeOf<unknown>();
        expectTypeOf(await ctx.waitForSignal<number>('plain')).toEqualTypeOf<number>();
        // @ts-expect-error human_review carries a boolean, not a string
        await ctx.waitForSignal<string>(humanReview);
        // @ts-expect-error the awaited value is a boolean
        const text: string = await ctx.waitForSignal(humanReview);
        void text;
      },
    });
  });
});

describe('a workflow with an input schema', () => {
  const order = defineWorkflow({
    name: 'order',
    version: 1,
    input: z.object({ sku: z.string(), quantity: z.number().int().default(1) }),
    run: async (_ctx, input) => {
      // The run receives the schema's output: the default is filled in.
      expectTypeOf(input).toEqualTypeOf<{ sku: string; quantity: number }>();
      return input.quantity;
    },
  });

  it('infers the start input from the schema (its input side: defaults are optional)', async () => {
    const run = await client.start(order, { sku: 'S-1' });
    expectTypeOf(await run.result()).toEqualTypeOf<number>();
    await client.start(order, { sku: 'S-1', quantity: 2 });
    // @ts-expect-error sku must be a string
    await client.start(order, { sku: 1 });
    // @ts-expect-error sku is required
    await client.start(order, { quantity: 2 });
  });
});

describe('the sub-clients', () => {
  const nightly = { scheduleId: 'nightly', cron: '0 2 * * *', timeZone: 'Europe/Paris' };

  it("type a schedule's input by its workflow definition, as client.start does", async () => {
    await client.schedules.create(loanApproval, { applicantId: 'A-7291' }, nightly);
    // @ts-expect-error applicantId must be a string
    await client.schedules.create(loanApproval, { applicantId: 7291 }, nightly);
    // @ts-expect-error a required field is missing
    await client.schedules.create(loanApproval, {}, nightly);
    // @ts-expect-error explicit arguments do not override the definition's own input type
    await client.schedules.create<{ other: number }>(loanApproval, { other: 1 }, nightly);
  });

  it('take any schedule input by { name, version }, unless a type argument says otherwise', async () => {
    const ref = { name: 'loan_approval', version: 1 };
    await client.schedules.create(ref, { anything: 1 }, nightly);
    await client.schedules.create<{ applicantId: string }>(ref, { applicantId: 'A' }, nightly);
    // @ts-expect-error applicantId must be a string
    await client.schedules.create<{ applicantId: string }>(ref, { applicantId: 1 }, nightly);
  });

  it('give what an operator acts on its own type', async () => {
    expectTypeOf(await client.runs.pause('r1')).toEqualTypeOf<'paused' | 'pause-requested'>();
    expectTypeOf(await client.runs.resume('r1')).toEqualTypeOf<boolean>();
    expectTypeOf(await client.runs.delete('r1')).toEqualTypeOf<RunDeletion>();
    expectTypeOf(
      await client.fleet.replayCheck({ workflows: [loanApproval] }),
    ).toEqualTypeOf<ReplayCheckReport>();
    const run = await client.start(loanApproval, { applicantId: 'A-7291' });
    expectTypeOf(await run.pause()).toEqualTypeOf<'paused' | 'pause-requested'>();
  });

  it("are the only way to an operator's calls: the root forwards none of them", () => {
    // @ts-expect-error client.runs.pause
    void client.pause;
    // @ts-expect-error client.runs.resume
    void client.resume;
    // @ts-expect-error client.runs.delete
    void client.delete;
    // @ts-expect-error client.runs.children
    void client.children;
    // @ts-expect-error client.runs.timeline
    void client.timeline;
    // @ts-expect-error client.timeTravel.checkpoints
    void client.checkpoints;
    // @ts-expect-error client.timeTravel.fork
    void client.fork;
    // @ts-expect-error client.timeTravel.retry
    void client.retry;
    // @ts-expect-error client.fleet.replayCheck
    void client.replayCheck;
  });
});
