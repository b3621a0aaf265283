/**
 * The run-stream crash scenario's workflow (stream-scenario.ts), loaded by real worker processes:
 * it writes `start` to its `progress` stream from workflow code, then an activity writes `count`
 * tokens to its `tokens` stream, one every `delayMs`, so a worker killed mid-activity leaves part
 * of them written; then `done`, and both streams are closed. What a reader must see is fixed by
 * the input: the tokens `t0`…`t<count-1>` after the last reset, and `start`, `done` once each.
 */
import { defineActivity, defineWorkflow } from '@baton/core';
import { setTimeout as sleep } from 'node:timers/promises';

export interface StreamerInput {
  count: number;
  delayMs: number;
}

const speak = defineActivity({
  name: 'crash_stream_tokens',
  run: async (input: StreamerInput, io) => {
    const tokens = io.stream<string>('tokens');
    for (let i = 0; i < input.count; i++) {
      await tokens.write(`t${i}`);
      await sleep(input.delayMs, undefined, { signal: io.signal });
    }
    return input.count;
  },
});

export const crashStreamer = defineWorkflow({
  name: 'crash_streamer',
  version: 1,
  run: async (ctx, input: StreamerInput) => {
    const progress = ctx.stream<string>('progress');
    progress.write('start');
    const count = await ctx.run(speak, input);
    progress.write('done');
    progress.close();
    ctx.stream('tokens').close();
    return count;
  },
});
