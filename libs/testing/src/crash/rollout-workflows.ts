/**
 * What the rollout scenario's three builds share (rollout-scenario.ts): the input of a run, the
 * ledger activity every step goes through, and the output each version must end with. The builds
 * themselves are rollout-workflows-v1.ts, -v2.ts and -v3.ts, each loaded by real worker processes
 * through BATON_WORKFLOWS.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, type WorkflowContext } from '@baton/core';
import { workerLedger } from './ledger.js';

/** The workflow every build registers, at versions 1 (v1, v2) and 2 (v2, v3). */
export const ROLLOUT_WORKFLOW = 'rollout_order';
/** The signal a `signal` run waits for; its payload enters the output. */
export const ROLLOUT_SIGNAL = 'approve';
/** The patch the v2 build adds to version 1 (a receipt step after the last one). */
export const ROLLOUT_PATCH = 'send-receipt';
/** The ledger step number of the receipt (the chain's steps are 0 and 1). */
export const RECEIPT_STEP = 9;

export interface RolloutInput {
  /** Distinguishes runs; enters every step's value. */
  seed: number;
  /** Between the two steps: a durable timer of `sleepMs`, or a wait for the `approve` signal. */
  wait: 'sleep' | 'signal';
  sleepMs: number;
  /** How long each step's activity takes (ms): long enough for a SIGTERM or SIGKILL to land inside. */
  stepMs: number;
}

/** The value of step `step` of a run at `version`, from the previous value. */
export function rolloutStepValue(previous: number, step: number, seed: number, version: number): number {
  return (previous * 31 + step * 7 + seed * version + version) % 1_000_003;
}

/** The signal payload the test sends to the run with this seed. */
export function approvalOf(seed: number): number {
  return seed * 3 + 1;
}

/** The output a run of `version` with this input must end with. */
export function rolloutExpectedOutput(version: number, input: RolloutInput): string {
  const first = rolloutStepValue(0, 0, input.seed, version);
  const between = input.wait === 'signal' ? approvalOf(input.seed) : 0;
  const second = rolloutStepValue(first + between, 1, input.seed, version);
  return `v${version}:${second}`;
}

async function delay(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch((err: unknown) => {
    throw signal.aborted ? signal.reason : err;
  });
}

/**
 * One step of a run: records the execution (this process's pid) in the ledger, takes `delayMs`,
 * applies the step's effect once under the run's idempotency key, and returns the step's value.
 */
export const rolloutStep = defineActivity({
  name: 'rollout_step',
  retry: { maxAttempts: 10, initialDelayMs: 50, maxDelayMs: 1_000 },
  timeoutMs: 15_000,
  run: async (
    input: { step: number; previous: number; seed: number; version: number; delayMs: number },
    io,
  ) => {
    const executionId = await workerLedger().startExecution(io.idempotencyKey, io.runId, input.step);
    await delay(input.delayMs, io.signal);
    const value = rolloutStepValue(input.previous, input.step, input.seed, input.version);
    await workerLedger().applyEffect(io.idempotencyKey, io.runId, input.step, value, executionId);
    return value;
  },
});

/** The receipt the patched version 1 sends: an effect of its own, which leaves the output as it was. */
export const rolloutReceipt = defineActivity({
  name: 'rollout_receipt',
  retry: { maxAttempts: 10, initialDelayMs: 50, maxDelayMs: 1_000 },
  timeoutMs: 15_000,
  run: async (input: { seed: number }, io) => {
    const executionId = await workerLedger().startExecution(io.idempotencyKey, io.runId, RECEIPT_STEP);
    await workerLedger().applyEffect(io.idempotencyKey, io.runId, RECEIPT_STEP, input.seed, executionId);
    return input.seed;
  },
});

/**
 * The body every build of `rollout_order` shares: step 0, a durable sleep or a wait for the
 * approval signal, step 1. Resolves step 1's value; each build wraps it (v1 patched adds a receipt).
 */
export async function rolloutOrderSteps(
  ctx: WorkflowContext,
  input: RolloutInput,
  version: number,
): Promise<number> {
  const { seed, stepMs: delayMs } = input;
  const first = await ctx.run(rolloutStep, { step: 0, previous: 0, seed, version, delayMs });
  let between = 0;
  if (input.wait === 'sleep') await ctx.sleep(input.sleepMs);
  else between = await ctx.waitForSignal<number>(ROLLOUT_SIGNAL);
  return ctx.run(rolloutStep, { step: 1, previous: first + between, seed, version, delayMs });
}
