/**
 * A workflow whose second step's result has no JSON form (a BigInt), loaded by real worker
 * processes next to the crash suite's chain (re-exported here, so BATON_WORKFLOWS names one
 * module). Every execution is recorded in the crash ledger, so the test counts them from outside.
 *
 * The poisoned step is non-idempotent (ActivityStarted is journaled first) and reconciles from
 * the ledger: a worker SIGKILLed while the step was in flight leaves it in doubt, and the next
 * owner finds the execution and takes its result (the same BigInt) instead of running it again.
 * So a step executes once per run even across a kill, and the result fails the step either way.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineWorkflow } from '@baton/core';
import { workerLedger } from './ledger.js';

export { crashChain } from './crash-workflow.js';

export interface PoisonedInput {
  seed: number;
  /** The workflow catches the failed step and completes (else the run fails with it). */
  catches: boolean;
  /** How long each activity takes, so a kill lands while runs are in flight. */
  delayMs: number;
}

/** The sequence numbers of the workflow's steps. */
export const POISONED_STEPS = { warmUp: 0, poison: 1, after: 2 } as const;

/** Waits `ms`; an aborted attempt ends at once with the signal's own reason (not Node's AbortError). */
async function delay(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch((err: unknown) => {
    throw signal.aborted ? signal.reason : err;
  });
}

/** A step with an ordinary effect, recorded in the ledger like the chain's. */
const plainStep = defineActivity({
  name: 'poisoned_plain_step',
  run: async (input: { step: number; seed: number; delayMs: number }, io) => {
    const id = await workerLedger().startExecution(io.idempotencyKey, io.runId, input.step);
    await delay(input.delayMs, io.signal);
    await workerLedger().applyEffect(io.idempotencyKey, io.runId, input.step, input.seed, id);
    return input.seed;
  },
});

const bigintResult = defineActivity({
  name: 'poisoned_bigint_result',
  idempotent: false,
  run: async (input: { seed: number; delayMs: number }, io) => {
    const id = await workerLedger().startExecution(io.idempotencyKey, io.runId, POISONED_STEPS.poison);
    await delay(input.delayMs, io.signal);
    await workerLedger().applyEffect(io.idempotencyKey, io.runId, POISONED_STEPS.poison, input.seed, id);
    return { amount: BigInt(input.seed) };
  },
  reconcile: async (input, io) => {
    const executions = await workerLedger().executions();
    return executions.some((e) => e.key === io.idempotencyKey) ? { amount: BigInt(input.seed) } : undefined;
  },
});

export const poisonedRun = defineWorkflow({
  name: 'crash_poisoned',
  version: 1,
  run: async (ctx, input: PoisonedInput) => {
    const { seed, delayMs } = input;
    await ctx.run(plainStep, { step: POISONED_STEPS.warmUp, seed, delayMs });
    try {
      await ctx.run(bigintResult, { seed, delayMs });
    } catch (err) {
      if (!input.catches) throw err;
      const code = (err as Error & { cause?: { code?: string } }).cause?.code;
      await ctx.run(plainStep, { step: POISONED_STEPS.after, seed, delayMs });
      return `caught ${code}`;
    }
    return 'encoded';
  },
});
