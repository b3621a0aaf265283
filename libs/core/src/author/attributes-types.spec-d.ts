/**
 * Compile-time tests of `ctx.setAttributes`' types (vitest's typecheck mode): a workflow that
 * declares its attributes takes only those names, each with its type's values; one that does not
 * takes any name with a string, number, boolean, Date or null.
 */
import { describe, expectTypeOf, it } from 'vitest';
import { defineWorkflow, type StandardSchemaV1, type WorkflowDefinition } from './index.js';

declare const numeric: StandardSchemaV1<string | number, number>;

describe('ctx.setAttributes types', () => {
  it('holds a declared workflow to its names and types', () => {
    const wf = defineWorkflow({
      name: 'declared',
      version: 1,
      attributes: { customerId: 'keyword', total: 'number', vip: 'boolean', placedAt: 'time' },
      run: async (ctx, input: { id: string }) => {
        await ctx.setAttributes({ customerId: input.id, total: 1.5, vip: true, placedAt: new Date() });
        await ctx.setAttributes({ placedAt: '2026-11-25T10:00:00Z', total: null });
        // @ts-expect-error an undeclared name
        await ctx.setAttributes({ tier: 'gold' });
        // @ts-expect-error a number where a keyword is declared
        await ctx.setAttributes({ customerId: 42 });
        // @ts-expect-error a string where a boolean is declared
        await ctx.setAttributes({ vip: 'yes' });
        return input.id;
      },
    });
    expectTypeOf(wf).toEqualTypeOf<WorkflowDefinition<{ id: string }, string>>();
  });

  it('takes any name with a value of the four types when nothing is declared', () => {
    defineWorkflow({
      name: 'open',
      version: 1,
      run: async (ctx) => {
        await ctx.setAttributes({ customerId: '42', total: 3, vip: false, at: new Date(), old: null });
        // @ts-expect-error an object is no attribute value
        await ctx.setAttributes({ nested: { a: 1 } });
      },
    });
  });

  it('types the context of a workflow whose input comes from a schema', () => {
    defineWorkflow({
      name: 'schema',
      version: 1,
      input: numeric,
      attributes: { amount: 'number' },
      run: async (ctx, input) => {
        await ctx.setAttributes({ amount: input });
        // @ts-expect-error a string where a number is declared
        await ctx.setAttributes({ amount: String(input) });
        return input;
      },
    });
  });
});
