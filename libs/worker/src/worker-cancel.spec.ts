import { afterEach, describe, expect, it } from 'vitest';
import { CancelledError, defineActivity, defineWorkflow } from '@baton/core';
import type { Store } from '@baton/core/adapter';
import { memoryStore } from '@baton/core/memory';
import { decodeEntries } from '@baton/core/runtime';
import {
  busyWorkflow,
  CANCEL_REASON_WORKFLOWS,
  expectCancelledWithReason,
  waitingWorkflow,
} from './cancel-reason.spec-helper.js';
import { fleet, type Fleet } from './fleet.spec-helper.js';
import { withCapability } from './capabilities.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

describe('client.cancel(id, reason) (memory adapters)', () => {
  it('ends a running run cancelled with the reason', async () => {
    current = fleet({ workflows: CANCEL_REASON_WORKFLOWS, inProcessWaitMs: 1_000 });
    await current.spawn();
    await expectCancelledWithReason(current.client, busyWorkflow, 'running', 'customer withdrew order 17');
  });

  it('ends a suspended run cancelled with the reason its next owner reads from the store', async () => {
    current = fleet({ workflows: CANCEL_REASON_WORKFLOWS });
    await current.spawn();
    await expectCancelledWithReason(current.client, waitingWorkflow, 'suspended', 'duplicate application');
  });
});

/** A step whose activity returns after `ms`, whatever happens (it ignores its AbortSignal). */
const slowStep = defineActivity({
  name: 'cancel_window_step',
  run: async (ms: number) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return ms;
  },
});

const endsAfterStep = defineWorkflow({
  name: 'cancel_window_ends',
  version: 1,
  run: async (ctx) => ctx.run(slowStep, 0),
});

const catchesCancel = defineWorkflow({
  name: 'cancel_window_catches',
  version: 1,
  run: async (ctx) => {
    try {
      return await ctx.run(slowStep, 60_000);
    } catch (err) {
      if (!(err instanceof CancelledError)) throw err;
      return 'cleaned up';
    }
  },
});

/**
 * A memory store whose control.closeCancels first runs `before` (a cancel that lands just before the owner
 * closes the run's cancels, or just after), so the race is exact, not timed.
 */
function storeAround(hooks: {
  before?: (s: Store, runId: string) => Promise<void>;
  after?: (s: Store, runId: string) => Promise<void>;
}): () => Store {
  return () => {
    const inner = memoryStore();
    return withCapability(inner, 'control', {
      closeCancels: async (runId: string, epoch: number) => {
        await hooks.before?.(inner, runId);
        const answer = await inner.control.closeCancels(runId, epoch);
        await hooks.after?.(inner, runId);
        return answer;
      },
    });
  };
}

describe('the cancel window before a run journals its end (memory adapters)', () => {
  it('ends the run cancelled when a cancel was accepted after its last step, before its end', async () => {
    const accepted: boolean[] = [];
    const before = async (s: Store, runId: string) => {
      accepted.push((await s.control.requestCancel(runId, 'just in time')).tooLate !== true);
    };
    current = fleet({ workflows: [endsAfterStep] }, (t) => t, storeAround({ before }));
    await current.spawn();
    const run = await current.client.start(endsAfterStep, null);
    await expect(run.result({ timeoutMs: 5_000 })).rejects.toMatchObject({
      name: 'CancelledError',
      reason: 'just in time',
    });
    expect(accepted).toEqual([true]);
    const types = (await current.journal.journal.read(run.runId, 0))
      .flatMap((r) => decodeEntries(r.data, run.runId))
      .map((e) => e.type);
    expect(types).toContain('RunCancelled');
    expect(types).not.toContain('RunCompleted');
  });

  it('keeps the end when the cancel came after the owner closed the window, and says it was too late', async () => {
    const answers: unknown[] = [];
    const after = async (s: Store, runId: string) => {
      answers.push(await s.control.requestCancel(runId, 'too late'));
    };
    current = fleet({ workflows: [endsAfterStep] }, (t) => t, storeAround({ after }));
    await current.spawn();
    const run = await current.client.start(endsAfterStep, null);
    expect(await run.result({ timeoutMs: 5_000 })).toBe(0);
    expect(answers).toEqual([{ found: true, wake: false, tooLate: true }]);
    await current.client.cancel(run.runId, 'much later');
    expect((await current.client.describe(run.runId)).status).toBe('completed');
  });

  it('keeps the end a workflow chose after it caught the cancel', async () => {
    current = fleet({ workflows: [catchesCancel], inProcessWaitMs: 1_000 });
    await current.spawn();
    const run = await current.client.start(catchesCancel, null);
    const deadline = Date.now() + 5_000;
    while ((await current.client.describe(run.runId).catch(() => undefined))?.status !== 'running') {
      if (Date.now() > deadline) throw new Error('the run did not start within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await current.client.cancel(run.runId, 'stop');
    expect(await run.result({ timeoutMs: 5_000 })).toBe('cleaned up');
  });
});
