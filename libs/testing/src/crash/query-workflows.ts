/**
 * A workflow module for the query specs' worker processes (BATON_WORKFLOWS): `query_holder` takes
 * a first step, then holds its worker in a long second one, so a test finds the run held and can
 * freeze its holder (SIGSTOP) while it holds it. Its queries read what it has done; `replaying`
 * answers ctx.isReplaying, false from a live run's memory and true from a replay, so a test knows
 * which path answered.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineQuery, defineWorkflow } from '@baton/core';

export const queryProgress = defineQuery<{ stage: string; done: string[] }>('progress');
export const queryReplaying = defineQuery<boolean>('replaying');

const step = defineActivity({
  name: 'query_step',
  run: async (input: { name: string; holdMs: number }, io) => {
    await sleep(input.holdMs, undefined, { signal: io.signal });
    return input.name;
  },
});

export const queryHolder = defineWorkflow({
  name: 'query_holder',
  version: 1,
  run: async (ctx, holdMs: number) => {
    let stage = 'starting';
    const done: string[] = [];
    ctx.onQuery(queryProgress, () => ({ stage, done }));
    ctx.onQuery(queryReplaying, () => ctx.isReplaying);
    done.push(await ctx.run(step, { name: 'first', holdMs: 0 }));
    stage = 'holding';
    done.push(await ctx.run(step, { name: 'second', holdMs }));
    stage = 'done';
    return done;
  },
});
