/**
 * The BullMQ baseline's step-job processor, shared by the bench process (runs executed one at a
 * time) and the baseline's worker process (bullmq-worker-main.ts: the throughput phase). chain10
 * is one job whose `job.data.step` says the next step; the processor saves step and value with
 * `job.updateData` after each step, so a retried job resumes after the last finished step.
 */
import type { Job } from 'bullmq';

/** Steps of every chain10 run. */
export const CHAIN_STEPS = 10;
/** The queue's name (under a prefix of each measurement's own). */
export const QUEUE_NAME = 'chain10';

export interface ChainData {
  step: number;
  x: number;
}

/** Runs the job's remaining steps, saving progress after each; `onStep` hears of every step. */
export async function processStepJob(job: Job<ChainData, number>, onStep: () => void): Promise<number> {
  let { step, x } = job.data;
  while (step < CHAIN_STEPS) {
    x = x + 1;
    await job.updateData({ ...job.data, step: step + 1, x });
    step++;
    onStep();
  }
  return x;
}
