/**
 * `client.cancel(id, reason)` keeps its words: the run ends cancelled with that reason, as
 * result() and describe() report it, whether the cancel reaches the worker running the run, or a
 * suspended run woken by it (whose next owner reads the reason the store kept with the flag).
 * Called by the memory spec and by the real bus+store integration spec.
 */
import { expect } from 'vitest';
import { defineWorkflow, type AnyWorkflowDefinition } from '@baton/core';
import type { Client } from '@baton/client';

/** Waits in ctx.sleep steps until cancelled: the run is running (inProcessWaitMs above the step). */
export const busyWorkflow = defineWorkflow({
  name: 'cancel_reason_busy',
  version: 1,
  run: async (ctx) => {
    for (;;) await ctx.sleep(50);
  },
});

/** Suspends waiting for a signal that never comes. */
export const waitingWorkflow = defineWorkflow({
  name: 'cancel_reason_waiting',
  version: 1,
  run: async (ctx) => ctx.waitForSignal<string>('never'),
});

export const CANCEL_REASON_WORKFLOWS: AnyWorkflowDefinition[] = [busyWorkflow, waitingWorkflow];

/** Polls (bounded) until the run's record has `status`. */
async function status(client: Client, runId: string, wanted: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const run = await client.describe(runId).catch(() => undefined);
    if (run?.status === wanted) return;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not become ${wanted} within 10 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The run, cancelled with `reason` while `state`, ends cancelled with exactly that reason. */
export async function expectCancelledWithReason(
  client: Client,
  workflow: AnyWorkflowDefinition,
  state: 'running' | 'suspended',
  reason: string,
): Promise<void> {
  const run = await client.start(workflow, null);
  await status(client, run.runId, state);
  await client.cancel(run.runId, reason);
  await expect(run.result({ timeoutMs: 10_000 })).rejects.toMatchObject({
    name: 'CancelledError',
    reason,
  });
  const described = await client.describe(run.runId);
  expect(described.status).toBe('cancelled');
  expect(described.error?.message).toBe(reason);
}
