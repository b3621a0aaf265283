/**
 * The bulk actions a console runs as jobs in its process (api-bulk.ts starts and reads them):
 * each is client.bulk.run (runs) or client.bulk.redriveDeadLetters (dead letters) with progress
 * kept for the page to poll.
 *
 * Invariants:
 * 1. At most {@link MAX_RUNNING_JOBS} jobs run at once and about {@link KEPT_JOBS} are remembered
 *    (finished ones are forgotten first); a start beyond that is refused (429), never queued.
 * 2. {@link BulkJobs.abortAll} (the console closing) stops every running job: the items under way
 *    finish, no new one starts.
 */
import { randomUUID } from 'node:crypto';
import type {
  BulkOptions,
  BulkProgress,
  BulkRunActionName,
  BulkSummary,
  Client,
  DeadLetterFilter,
  RunFilter,
} from '@baton/client';
import { HttpError } from './http-error.js';

export const MAX_RUNNING_JOBS = 4;
export const KEPT_JOBS = 50;

/** What the page polls: the action, its progress, and its summary once done. */
export interface BulkJobState {
  id: string;
  /** A bulk action on runs, or `redrive` of dead letters. */
  action: BulkRunActionName | 'redrive';
  progress: Omit<BulkProgress, 'last'>;
  summary?: BulkSummary;
  error?: string;
  done: boolean;
}

/** The bulk jobs of one console. */
export class BulkJobs {
  private readonly jobs = new Map<string, BulkJobState>();
  private readonly aborts = new Map<string, AbortController>();

  get running(): number {
    return this.aborts.size;
  }

  /** client.bulk.run of `action` on the runs `filter` matches. */
  start(
    client: Client,
    action: BulkRunActionName,
    filter: RunFilter,
    redact: (text: string) => string,
  ): BulkJobState {
    return this.startJob(action, redact, (options) =>
      client.bulk.run(action, filter, { ...options, reason: 'cancelled in bulk from the console' }),
    );
  }

  /** client.bulk.redriveDeadLetters: every dead letter, or those of one code. */
  startRedrive(client: Client, filter: DeadLetterFilter, redact: (text: string) => string): BulkJobState {
    return this.startJob('redrive', redact, (options) => client.bulk.redriveDeadLetters(filter, options));
  }

  private startJob(
    action: BulkJobState['action'],
    redact: (text: string) => string,
    work: (options: Pick<BulkOptions, 'signal' | 'onProgress'>) => Promise<BulkSummary>,
  ): BulkJobState {
    if (this.running >= MAX_RUNNING_JOBS)
      throw new HttpError(
        429,
        `${MAX_RUNNING_JOBS} bulk actions are running already; wait for one to finish`,
      );
    const job: BulkJobState = {
      id: randomUUID(),
      action,
      progress: { done: 0, succeeded: 0, refused: 0, failed: 0 },
      done: false,
    };
    const abort = new AbortController();
    this.jobs.set(job.id, job);
    this.aborts.set(job.id, abort);
    for (const id of this.jobs.keys()) {
      if (this.jobs.size <= KEPT_JOBS) break;
      if (this.jobs.get(id)!.done) this.jobs.delete(id);
    }
    work({
      signal: abort.signal,
      onProgress: ({ done, succeeded, refused, failed }) => {
        job.progress = { done, succeeded, refused, failed };
      },
    })
      .then(
        (summary) => {
          job.summary = summary;
        },
        (err: unknown) => {
          job.error = redact(err instanceof Error ? err.message : String(err));
        },
      )
      .finally(() => {
        job.done = true;
        this.aborts.delete(job.id);
      });
    return job;
  }

  get(id: string): BulkJobState {
    const job = this.jobs.get(id);
    if (job === undefined)
      throw new HttpError(404, `no bulk action ${id} (the console restarted, or it is long done)`);
    return job;
  }

  abortAll(): void {
    for (const abort of this.aborts.values()) abort.abort();
  }
}
