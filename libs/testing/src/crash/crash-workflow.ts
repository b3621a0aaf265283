/**
 * The crash suite's workflow, loaded by real worker processes through BATON_WORKFLOWS: a chain of
 * `steps` activities, each applying an effect to the Postgres ledger under its idempotency key and
 * recording every execution. The output is a pure function of the input, so the test knows the
 * right answer for every run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineRateLimit, defineWorkflow, type WorkflowContext } from '@baton/core';
import { workerLedger } from './ledger.js';

export interface ChainInput {
  /** Distinguishes runs; enters every step's value. */
  seed: number;
  steps: number;
  /** Each activity takes a random time in [minDelayMs, maxDelayMs). */
  minDelayMs: number;
  maxDelayMs: number;
  /**
   * Step `n` takes `delaysMs[n]` instead, where given: a scenario that needs one step long (a
   * fault must land inside it) spends no time on the others.
   */
  delaysMs?: number[];
}

/** The value step `step` produces from the previous step's value. */
export function stepValue(previous: number, step: number, seed: number): number {
  return (previous * 31 + step * 7 + seed) % 1_000_003;
}

/** The output a run with this input must end with. */
export function expectedOutput(input: ChainInput): number {
  let value = 0;
  for (let step = 0; step < input.steps; step++) value = stepValue(value, step, input.seed);
  return value;
}

/** A spread of activity durations that is the same on every replay (no journaled randomness needed). */
function delayOf(input: ChainInput, step: number): number {
  const given = input.delaysMs?.[step];
  if (given !== undefined) return given;
  const span = Math.max(1, input.maxDelayMs - input.minDelayMs);
  return input.minDelayMs + ((input.seed * 7_919 + step * 104_729) % span);
}

/** Waits `ms`; an aborted attempt ends at once with the signal's own reason (not Node's AbortError). */
async function delay(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch((err: unknown) => {
    throw signal.aborted ? signal.reason : err;
  });
}

export const applyStep = defineActivity({
  name: 'apply_step',
  retry: { maxAttempts: 10, initialDelayMs: 50, maxDelayMs: 1_000 },
  timeoutMs: 10_000,
  run: runStep,
});

/** Runs one step of a chain: the effect under the step's key, each execution recorded. */
async function runStep(
  input: { step: number; previous: number; seed: number; delayMs: number },
  io: { idempotencyKey: string; runId: string; signal: AbortSignal },
): Promise<number> {
  const executionId = await workerLedger().startExecution(io.idempotencyKey, io.runId, input.step);
  await delay(input.delayMs, io.signal);
  const value = stepValue(input.previous, input.step, input.seed);
  await workerLedger().applyEffect(io.idempotencyKey, io.runId, input.step, value, executionId);
  return value;
}

/** A chain's body: `input.steps` runs of `step`, each from the previous one's value. */
function chainOf(step: typeof applyStep) {
  return async (ctx: WorkflowContext, input: ChainInput): Promise<number> => {
    let value = 0;
    for (let n = 0; n < input.steps; n++) {
      value = await ctx.run(step, { step: n, previous: value, seed: input.seed, delayMs: delayOf(input, n) });
    }
    return value;
  };
}

export const crashChain = defineWorkflow({
  name: 'crash_chain',
  version: 1,
  run: chainOf(applyStep),
});

/** A parent of `children` crash chains (the child-workflow crash scenario). */
export interface ParentInput {
  seed: number;
  children: number;
  /** The shape of each child's chain; its seed comes from the parent's. */
  child: Omit<ChainInput, 'seed'>;
}

/** The input of the parent's child number `index`. */
export function childInput(input: ParentInput, index: number): ChainInput {
  return { ...input.child, seed: input.seed * 100 + index };
}

/** The output a parent must end with: the sum of its children's. */
export function expectedParentOutput(input: ParentInput): number {
  let sum = 0;
  for (let i = 0; i < input.children; i++) sum += expectedOutput(childInput(input, i));
  return sum;
}

/** Starts every child first (they run in parallel, on any worker), then waits for each. */
export const crashParent = defineWorkflow({
  name: 'crash_parent',
  version: 1,
  run: async (ctx, input: ParentInput) => {
    const handles = [];
    for (let i = 0; i < input.children; i++)
      handles.push(await ctx.startChild(crashChain, childInput(input, i)));
    let sum = 0;
    for (const handle of handles) sum += await handle.result();
    return sum;
  },
});

/** A crash chain whose runs of one `customer` run at most two at once (concurrency per key). */
export interface KeyedInput extends ChainInput {
  customer: string;
}

/** How many runs of one customer `crash_keyed` lets run at once. */
export const KEYED_LIMIT = 2;

export const crashKeyed = defineWorkflow({
  name: 'crash_keyed',
  version: 1,
  concurrency: { key: (input: KeyedInput) => input.customer, limit: KEYED_LIMIT },
  run: async (ctx, input: KeyedInput) => crashChain.run(ctx, input),
});

/** The rate limit of `crash_limited`'s steps: at most this many attempts start per window, fleet-wide. */
export const LIMITED_RATE = { limit: 6, perMs: 1_000 };
const crashRate = defineRateLimit({ name: 'crash-rate', limit: LIMITED_RATE.limit, per: LIMITED_RATE.perMs });

const applyLimitedStep = defineActivity({
  name: 'apply_limited_step',
  retry: { maxAttempts: 10, initialDelayMs: 50, maxDelayMs: 1_000 },
  timeoutMs: 10_000,
  rateLimit: crashRate,
  run: runStep,
});

/** A crash chain whose every step attempt takes a place under {@link LIMITED_RATE} (rate limits). */
export const crashLimited = defineWorkflow({
  name: 'crash_limited',
  version: 1,
  run: chainOf(applyLimitedStep),
});

/** What the update `crash_add` of `crash_updatable` carries: the amount it adds, and how long its step takes. */
export interface CrashAddArgs {
  amount: number;
  delayMs: number;
}

/** The ledger step of a `crash_updatable` run's n-th accepted update (apart from any chain's steps). */
export const UPDATE_STEP_BASE = 1_000;

/**
 * Answers the update `crash_add` (the update scenario): each accepted update applies one ledger
 * step (step {@link UPDATE_STEP_BASE} + its number, under its own idempotency key), then adds its
 * amount and answers the total; the signal `crash_finish` ends the run with that total. A handler
 * that ran twice in effect would add its amount twice, or apply its step twice in the ledger.
 */
export const crashUpdatable = defineWorkflow({
  name: 'crash_updatable',
  version: 1,
  run: async (ctx, input: { seed: number }) => {
    let total = 0;
    let accepted = 0;
    ctx.onUpdate('crash_add', async (args: CrashAddArgs) => {
      const step = UPDATE_STEP_BASE + accepted++;
      await ctx.run(applyStep, { step, previous: total, seed: input.seed, delayMs: args.delayMs });
      total += args.amount;
      return { total, accepted };
    });
    await ctx.waitForSignal('crash_finish');
    return total;
  },
});
