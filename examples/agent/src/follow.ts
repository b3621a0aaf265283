/**
 * Reading an agent's streams across continue-as-new, knowing which run wrote each item. The agent
 * closes its streams before it continues as new, so `client.stream` ends with each run's part (a
 * stream left open would be read on into the successor by `client.stream` itself: docs/streams.md,
 * "Streams and continue-as-new"); this follows the chain run by run and tags every item with its
 * run, whose own step numbers a `reset` names.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTINUED_AS, isContinuedAsNew, isFinishedRun, type Client } from '@baton/client';
import type { StreamItem } from '@baton/core';

/** An item of a chain's stream, and the run that wrote it. */
export interface ChainItem<T> {
  runId: string;
  item: StreamItem<T>;
}

/** The run `runId` continued as, once it has ended; undefined when it ended otherwise. */
export async function successorOf(
  client: Client,
  runId: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  for (;;) {
    const run = await client.describe(runId);
    if (isFinishedRun(run.status)) {
      return run.status === 'completed' && isContinuedAsNew(run.result)
        ? run.result[CONTINUED_AS].runId
        : undefined;
    }
    // A run that closed its stream may still be finishing.
    if (signal?.aborted) return undefined;
    await sleep(50);
  }
}

/**
 * Stream `name` of run `runId` and of each run it continued as, in order. A reader that stops
 * resumes with `client.stream(runId, name, { from: seq + 1 })` on the run of the last item it saw.
 */
export async function* followChain<T>(
  client: Client,
  runId: string,
  name: string,
  options: { signal?: AbortSignal; pollMs?: number } = {},
): AsyncGenerator<ChainItem<T>> {
  for (let current: string | undefined = runId; current !== undefined;) {
    for await (const item of client.stream<T>(current, name, options)) yield { runId: current, item };
    if (options.signal?.aborted) return;
    current = await successorOf(client, current, options.signal);
  }
}
