/**
 * Compile-time tests of the types workflow definitions and signals carry (run by vitest's
 * typecheck mode). A `@ts-expect-error` that stops erroring fails the run (TS2578).
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  defineSignal,
  defineWorkflow,
  type SignalDefinition,
  type SignalPayload,
  type StandardSchemaV1,
  type WorkflowDefinition,
  type WorkflowInput,
  type WorkflowOutput,
} from './index.js';

/** A hand-made Standard Schema: accepts a string or a number, produces a number. */
declare const numeric: StandardSchemaV1<string | number, number>;

describe('defineWorkflow', () => {
  it('takes the input type from run and the output type from its result', () => {
    const wf = defineWorkflow({
      name: 'wf',
      version: 1,
      run: async (_ctx, input: { n: number }) => `${input.n}`,
    });
    expectTypeOf(wf).toEqualTypeOf<WorkflowDefinition<{ n: number }, string>>();
    expectTypeOf<WorkflowInput<typeof wf>>().toEqualTypeOf<{ n: number }>();
    expectTypeOf<WorkflowOutput<typeof wf>>().toEqualTypeOf<string>();
  });

  it('takes the input types from a Standard Schema: start accepts its input, run gets its output', () => {
    const wf = defineWorkflow({
      name: 'wf',
      version: 1,
      input: numeric,
      run: async (_ctx, input) => {
        expectTypeOf(input).toEqualTypeOf<number>();
        return input * 2;
      },
    });
    expectTypeOf(wf).toEqualTypeOf<WorkflowDefinition<number, number, string | number>>();
    expectTypeOf<WorkflowInput<typeof wf>>().toEqualTypeOf<string | number>();
    expectTypeOf<WorkflowOutput<typeof wf>>().toEqualTypeOf<number>();
  });

  it('refuses a run whose input parameter contradicts the schema', () => {
    // @ts-expect-error the schema produces a number, not a string (no overload takes this run)
    defineWorkflow({
      name: 'wf',
      version: 1,
      input: numeric,
      run: async (_ctx, input: string) => input,
    });
  });

  it('refuses an input that is not a schema', () => {
    // @ts-expect-error input must be a Standard Schema
    defineWorkflow({ name: 'wf', version: 1, input: { parse: () => 1 }, run: async () => null });
  });
});

describe('defineSignal', () => {
  it('carries its payload type, and unknown without one', () => {
    const review = defineSignal<boolean>('review');
    expectTypeOf(review).toEqualTypeOf<SignalDefinition<boolean>>();
    expectTypeOf<SignalPayload<typeof review>>().toEqualTypeOf<boolean>();
    expectTypeOf<SignalPayload<ReturnType<typeof defineSignal>>>().toEqualTypeOf<unknown>();
  });

  it('takes its payload type from a schema: the output for the workflow, the input for the sender', () => {
    const schema = {} as StandardSchemaV1<string, number>;
    const parsed = defineSignal('parsed', { schema });
    expectTypeOf(parsed).toEqualTypeOf<SignalDefinition<number, string>>();
    expectTypeOf<SignalPayload<typeof parsed>>().toEqualTypeOf<number>();
    const typed = defineSignal<number>('typed', { schema: {} as StandardSchemaV1<unknown, number> });
    expectTypeOf(typed).toEqualTypeOf<SignalDefinition<number>>();
  });

  it('is not interchangeable with a signal of another payload type', () => {
    const review = defineSignal<boolean>('review');
    // @ts-expect-error a boolean signal is not a string signal
    const asText: SignalDefinition<string> = review;
    void asText;
  });
});
