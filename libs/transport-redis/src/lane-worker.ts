/**
 * A lane's BullMQ worker, in manual mode (no processor), with the one step of BullMQ's own
 * `getNextJob` that the batch take (bull-batch.ts) needs after its script: turning a taken job's
 * fields into BullMQ's Job, as the worker does after `moveToActive` (including the next iteration
 * of a job scheduler's job, for jobs a BullMQ producer added with a repeat).
 */
import { Worker, raw2NextJobData, type Job } from 'bullmq';

export class LaneWorker extends Worker {
  /** The Job of a job the take moved to active under `token`; undefined where BullMQ gives none. */
  async jobFromTaken(fields: string[], jobId: string, token: string): Promise<Job | undefined> {
    const [data] = raw2NextJobData([fields, jobId, 0, 0]) as [Parameters<Worker['createJob']>[0]];
    return (await this.nextJobFromJobData(data, jobId, token)) ?? undefined;
  }
}
