/**
 * Bulk actions on the runs page's current filter: the count first (a dry run, what the
 * confirmation quotes), then the action run as a job in this process, whose progress the page
 * polls. Built on client.bulk, which walks the runs with the store's cursor and refuses, with the
 * reason, each run in a state the action does not take.
 *
 * Invariants:
 * 1. At most {@link MAX_RUNNING_JOBS} jobs run at once and {@link KEPT_JOBS} are remembered; a
 *    start beyond that is refused (429), never queued without bound.
 * 2. Closing the console aborts every running job: the items under way finish, no new one starts.
 */
import { randomUUID } from 'node:crypto';
import {
  BULK_RUN_ACTION_NAMES,
  type BulkProgress,
  type BulkRunActionName,
  type BulkSummary,
  type Client,
  type RunFilter,
} from '@baton/client';
import { runQueryOf } from './api-runs.js';
import { bodyObject, HttpError, type Route } from './http-kit.js';

export const MAX_RUNNING_JOBS = 4;
export const KEPT_JOBS = 50;

/** What the page polls: the action, its progress, and its summary once done. */
export interface BulkJobState {
  id: string;
  action: BulkRunActionName;
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

  start(
    client: Client,
    action: BulkRunActionName,
    filter: RunFilter,
    redact: (text: string) => string,
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
    client.bulk
      .run(action, filter, {
        signal: abort.signal,
        reason: 'cancelled in bulk from the console',
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

function actionOf(text: string | null | undefined): BulkRunActionName {
  if (!BULK_RUN_ACTION_NAMES.includes(text as BulkRunActionName))
    throw new HttpError(
      400,
      `'action' must be one of ${BULK_RUN_ACTION_NAMES.join(', ')}, got '${text ?? ''}'`,
    );
  return text as BulkRunActionName;
}

/** The runs page's filter, without what only a listing takes (order, page size, cursor). */
function filterOf(params: URLSearchParams): RunFilter {
  const { order: _order, limit: _limit, cursor: _cursor, ...filter } = runQueryOf(params);
  return filter;
}

export const BULK_ROUTES: Route[] = [
  {
    method: 'GET',
    path: /^\/api\/bulk\/count$/,
    handle: async ({ client, query }) => {
      const action = actionOf(query.get('action'));
      return { action, count: await client.bulk.count(filterOf(query), action) };
    },
  },
  {
    method: 'POST',
    path: /^\/api\/bulk\/run$/,
    action: true,
    handle: async ({ client, body, bulk, redact }) => {
      const fields = bodyObject(body);
      const action = actionOf(typeof fields['action'] === 'string' ? fields['action'] : undefined);
      const filterText = typeof fields['filter'] === 'string' ? fields['filter'] : '';
      const filter = filterOf(new URLSearchParams(filterText));
      // Checked before the job starts, so an invalid filter is a 400 here and nothing is done.
      await client.runs.list({ ...filter, limit: 1 });
      return bulk.start(client, action, filter, redact);
    },
  },
  {
    method: 'GET',
    path: /^\/api\/bulk\/jobs\/([^/]+)$/,
    handle: async ({ params, bulk }) => bulk.get(params[0]!),
  },
];
