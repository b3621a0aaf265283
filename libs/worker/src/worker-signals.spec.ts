import { afterEach, describe, expect, it } from 'vitest';
import { defineSignal, defineWorkflow } from '@baton/core';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';
import { silentLogger, type Logger } from './logger.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

describe('signals to a finished run (memory adapters)', () => {
  it('acks and drops them with a debug line: nothing piles up in the inbox, nothing is dead-lettered', async () => {
    const wf = defineWorkflow({ name: 'quick', version: 1, run: async () => 'done' });
    const dropped: unknown[] = [];
    const logger: Logger = {
      ...silentLogger,
      debug: (obj, msg) => {
        if (msg === 'signal dropped: its run has already finished') dropped.push(obj);
      },
    };
    current = fleet({ workflows: [wf], logger });
    await current.spawn();
    const run = await current.client.start(wf, null);
    expect(await run.result({ timeoutMs: 5_000 })).toBe('done');
    for (let i = 0; i < 20; i++) await current.client.signal(run.runId, 'late', { i });
    await until(() => dropped.length === 20, 5_000, 'twenty dropped signals');
    expect(dropped[0]).toMatchObject({ runId: run.runId, signal: 'late' });
    expect(await current.store.readSignals(run.runId)).toEqual([]);
    expect(await current.transport.listDeadLetters()).toEqual([]);
    expect((await current.client.describe(run.runId)).status).toBe('completed');
  });
});

describe('typed signals (memory adapters)', () => {
  it('a signal sent with its definition reaches the run waiting on the same definition', async () => {
    const approval = defineSignal<{ approved: boolean; by: string }>('approval');
    const wf = defineWorkflow({
      name: 'awaits_approval',
      version: 1,
      run: async (ctx, input: { request: string }) => {
        const decision = await ctx.waitForSignal(approval);
        return `${input.request}: ${decision.approved ? 'approved' : 'refused'} by ${decision.by}`;
      },
    });
    current = fleet({ workflows: [wf] });
    await current.spawn();
    const run = await current.client.start(wf, { request: 'R-1' });
    await until(
      async () => (await current?.client.describe(run.runId).catch(() => undefined))?.status === 'suspended',
      5_000,
      'the run waiting for its signal',
    );
    await current.client.signal(run.runId, approval, { approved: true, by: 'ana' });
    expect(await run.result({ timeoutMs: 5_000 })).toBe('R-1: approved by ana');
    const history = (await current.client.history(run.runId)).map((p) => p.entry);
    expect(history).toContainEqual(expect.objectContaining({ type: 'SignalWaitStarted', name: 'approval' }));
  });
});
