/**
 * The bench's workflows, loaded by the worker processes through BATON_WORKFLOWS. Their activities
 * do (almost) nothing, so what is measured is Baton's own cost per durable step.
 */
import { defineActivity, defineWorkflow } from '@baton/core';

const increment = defineActivity({ name: 'increment', run: (x: number) => x + 1 });

/** chain10: 10 sequential durable steps, each x => x + 1. */
export const chain10 = defineWorkflow({
  name: 'bench_chain10',
  version: 1,
  run: async (ctx, x: number) => {
    for (let i = 0; i < 10; i++) x = await ctx.run(increment, x);
    return x;
  },
});

/** fanout: 1 step, then 50 in parallel, then 1: 52 durable steps. */
export const fanout = defineWorkflow({
  name: 'bench_fanout',
  version: 1,
  run: async (ctx, x: number) => {
    const first = await ctx.run(increment, x);
    const parts = await Promise.all(Array.from({ length: 50 }, (_, i) => ctx.run(increment, first + i)));
    return ctx.run(
      increment,
      parts.reduce((a, b) => a + b, 0),
    );
  },
});

/** 64 KiB of text, different per step so nothing can be deduplicated. */
const blob = defineActivity({
  name: 'blob',
  run: (step: number) => String(step % 10).repeat(64 * 1024),
});

/** payload: 10 steps, each returning a 64 KiB result; the run returns their total length. */
export const payload = defineWorkflow({
  name: 'bench_payload',
  version: 1,
  run: async (ctx, _: null) => {
    let total = 0;
    for (let i = 0; i < 10; i++) total += (await ctx.run(blob, i)).length;
    return total;
  },
});

export const STEPS_PER_RUN = { chain10: 10, fanout: 52, payload: 10 } as const;
