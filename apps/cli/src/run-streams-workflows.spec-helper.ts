/**
 * The workflows run-streams-readers.int.spec.ts runs on real worker processes (BATON_WORKFLOWS
 * names this module): a run that streams tokens from an activity, then a summary value from the
 * workflow, then closes the stream; and one that writes two streams. Gates (files the spec
 * creates) hold the activity before its first token, or after its second, so the spec can read
 * while the run writes, and SIGKILL the worker mid-activity.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineWorkflow } from '@baton/core';

export interface TokensInput {
  words: string[];
  /** Nothing is written until this file exists. */
  startGate?: string;
  /** After the second word, nothing more until this file exists. */
  midGate?: string;
  /** A pause between two words (ms). */
  pauseMs?: number;
}

async function waitFor(file: string, signal: AbortSignal): Promise<void> {
  while (!existsSync(file)) await sleep(50, undefined, { signal });
}

const speak = defineActivity({
  name: 'streams_speak',
  run: async (input: TokensInput, io) => {
    if (input.startGate !== undefined) await waitFor(input.startGate, io.signal);
    const out = io.stream<string>('tokens');
    for (const [i, word] of input.words.entries()) {
      if (i === 2 && input.midGate !== undefined) await waitFor(input.midGate, io.signal);
      await out.write(word);
      if (input.pauseMs !== undefined) await sleep(input.pauseMs, undefined, { signal: io.signal });
    }
    return input.words.length;
  },
});

/** One stream, `tokens`: the words as written, then `{ "words": n }`, then the close. */
export const streamsTokens = defineWorkflow({
  name: 'streams_tokens',
  version: 1,
  run: async (ctx, input: TokensInput) => {
    const words = await ctx.run(speak, input);
    const tokens = ctx.stream('tokens');
    tokens.write({ words });
    tokens.close();
    return words;
  },
});

/** Two streams, `progress` and `tokens`; neither closed (they end with the run). */
export const streamsTwo = defineWorkflow({
  name: 'streams_two',
  version: 1,
  run: async (ctx) => {
    ctx.stream('progress').write({ phase: 'start' });
    const words = await ctx.run(speak, { words: ['a', 'b'] });
    ctx.stream('progress').write({ phase: 'done' });
    return words;
  },
});
