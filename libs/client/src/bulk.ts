/**
 * Bulk actions: one action applied to every run a filter matches (cancel, retry, delete, pause,
 * resume), or to
 * every dead letter (redrive), with progress and a summary of what was done and what was refused.
 *
 * The runs are walked with the store's keyset cursor (oldest first), a page at a time, and each
 * page is acted on with bounded concurrency. Every per-run action is safe to repeat: a second
 * pass refuses what the first did (the run is no longer in a state the action takes) or does it
 * again harmlessly (a second cancel request), so an interrupted bulk action is finished by running
 * it again with the same filter.
 */
import { ConfigError, NotFoundError, RunStateError } from '@baton/core';
import {
  FINISHED_RUN_STATUSES,
  type ListedRun,
  type RunFilter,
  type RunQuery,
  type RunStatus,
} from '@baton/core/adapter';
import { countedAttribute } from './attribute-filter.js';
import { decodeDeadLetter } from './dead-letter-message.js';
import type { DeadLettersApi } from './dead-letters.js';
import type { RunsApi } from './runs.js';
import type { TimeTravelApi } from './time-travel.js';

/**
 * What bulk actions use of the client (a `Client` is one): the sub-clients that act on one run,
 * and the root's cancel. Its own type, so this module does not import client.ts, which creates
 * `client.bulk` from it.
 */
export interface BulkClient {
  readonly runs: Pick<RunsApi, 'list' | 'count' | 'pause' | 'resume' | 'delete'>;
  readonly deadLetters: Pick<DeadLettersApi, 'list' | 'redrive'>;
  readonly timeTravel: Pick<TimeTravelApi, 'retry'>;
  cancel(runId: string, reason?: string): Promise<void>;
}

/** The statuses of a run that has ended; no worker will touch it again. */

/** One action of the table {@link BULK_RUN_ACTIONS}. */
export interface BulkRunAction {
  /** What the action does, for help texts: "request cancellation". */
  description: string;
  /** What was done to a run, for messages: "cancellation requested". */
  done: string;
  /**
   * The statuses the action takes. A filter without `status` is narrowed to these; a run of
   * another status that a filter does match is refused with {@link wrongState}.
   */
  statuses: readonly RunStatus[];
  /** Acts on one run. Throws RunStateError or NotFoundError to refuse it; any other error fails it. */
  act(client: BulkClient, run: ListedRun, options: BulkOptions): Promise<void>;
}

/**
 * The names of the per-run actions a bulk run can apply. To add one, add its name here and its
 * entry to {@link BULK_RUN_ACTIONS}: the client's `bulk.run`, the CLI's `runs <action>` and its
 * help all read these.
 */
export const BULK_RUN_ACTION_NAMES = ['cancel', 'retry', 'delete', 'pause', 'resume'] as const;

/** The name of a bulk run action: `cancel`, `retry`, `delete`, `pause` or `resume`. */
export type BulkRunActionName = (typeof BULK_RUN_ACTION_NAMES)[number];

/** What each bulk run action takes and does. */
export const BULK_RUN_ACTIONS: Readonly<Record<BulkRunActionName, BulkRunAction>> = {
  cancel: {
    description: 'request cancellation (the run stops at its next step and ends cancelled)',
    done: 'cancellation requested',
    statuses: ['pending', 'running', 'suspended'],
    act: (client, run, options) => client.cancel(run.runId, options.reason ?? 'cancelled in bulk'),
  },
  retry: {
    description: 'retry a failed run from its last checkpoint (client.timeTravel.retry)',
    done: 'retry started',
    statuses: ['failed'],
    act: async (client, run) => {
      await client.timeTravel.retry(run.runId);
    },
  },
  delete: {
    description: 'delete a finished run for good (client.runs.delete)',
    done: 'deleted',
    statuses: FINISHED_RUN_STATUSES,
    act: async (client, run) => {
      await client.runs.delete(run.runId);
    },
  },
  pause: {
    description:
      'pause a run (client.runs.pause: a running one stops after the activities in flight; none resumes it until resumed)',
    done: 'paused or pause requested',
    statuses: ['pending', 'running', 'suspended'],
    act: async (client, run, options) => {
      await client.runs.pause(run.runId, options.reason);
    },
  },
  resume: {
    description: 'resume a paused run, or withdraw a pause not reached yet (client.runs.resume)',
    done: 'resumed',
    statuses: ['paused'],
    act: async (client, run) => {
      if (!(await client.runs.resume(run.runId)))
        throw new RunStateError(run.runId, run.status, `run ${run.runId} is ${run.status}, not paused`);
    },
  },
};

/** Progress of a bulk action, reported after each item. */
export interface BulkProgress {
  /** Items handled so far (succeeded + refused + failed). */
  done: number;
  succeeded: number;
  refused: number;
  failed: number;
  /** The item just handled. */
  last: string;
}

export interface BulkOptions {
  /** Called after each item; keep it quick (it runs on the action's path). */
  onProgress?: (progress: BulkProgress) => void;
  /** Stops taking new items; those under way finish, and the summary says `interrupted`. */
  signal?: AbortSignal;
  /** How many items are acted on at once, 1 to 64. @defaultValue 8 */
  concurrency?: number;
  /** The reason a bulk cancel records on each run. @defaultValue 'cancelled in bulk' */
  reason?: string;
}

/** An item the action was not applied to, and why (wrong state, gone, unreadable). */
export interface BulkRefusal {
  id: string;
  reason: string;
}

/** An item the action failed on (an error other than a refusal, e.g. a lost connection). */
export interface BulkFailure {
  id: string;
  error: string;
}

/** What a bulk action did. */
export interface BulkSummary {
  /** The action: a run action's name or `redrive`. */
  action: string;
  /** Items the filter matched and the walk reached. */
  matched: number;
  /** Ids the action was applied to. */
  succeeded: string[];
  refused: BulkRefusal[];
  failed: BulkFailure[];
  /** True when the signal stopped the walk early; run the action again to finish. */
  interrupted: boolean;
}

/** The dead letters a bulk redrive takes: all of them, or those with one code. */
export interface DeadLetterFilter {
  /** Only letters with this code (`unknown-workflow`, `repeated-failure`, ...). */
  code?: string;
}

const PAGE = 200;
const MAX_CONCURRENCY = 64;

/** Bulk actions over runs and dead letters; `client.bulk`. */
export class BulkApi {
  constructor(private readonly client: BulkClient) {}

  /**
   * The dry run: how many runs the filter matches. With an action, a filter without `status` is
   * narrowed to the statuses the action takes, as {@link run} does. ConfigError names an invalid
   * filter. A filter of status and workflow only, or of those and one keyword or boolean search
   * attribute, is answered from the store's kept counts (`client.runs.count()`) once it matches
   * more than a page; any other is counted page by page.
   */
  async count(filter: RunFilter = {}, action?: BulkRunActionName): Promise<number> {
    const query = effectiveFilter(filter, action);
    // Checks the filter (the store names a bad field) and answers at once for a small result.
    const first = await this.client.runs.list({ ...query, order: 'oldest', limit: 1_000 });
    if (first.cursor === undefined) return first.runs.length;
    // By status and workflow only: the store's kept counts, instead of walking every run.
    const given = Object.entries(query).filter(([, value]) => value !== undefined);
    const counted = countedAttribute(query);
    if (
      given.every(
        ([field]) =>
          field === 'status' || field === 'workflow' || (field === 'attributes' && counted !== undefined),
      )
    ) {
      const counts = await this.client.runs.count(
        counted === undefined ? undefined : { attributes: query.attributes },
      );
      const statuses =
        query.status === undefined
          ? (Object.keys(counts.byStatus) as RunStatus[])
          : ([] as RunStatus[]).concat(query.status);
      const of = (status: RunStatus): number =>
        query.workflow === undefined
          ? counts.byStatus[status]
          : (counts.byWorkflow[query.workflow]?.[status] ?? 0);
      return [...new Set(statuses)].reduce((sum, status) => sum + of(status), 0);
    }
    let total = first.runs.length;
    let cursor: string | undefined = first.cursor;
    while (cursor !== undefined) {
      const page = await this.client.runs.list({ ...query, order: 'oldest', limit: 1_000, cursor });
      total += page.runs.length;
      cursor = page.cursor;
    }
    return total;
  }

  /**
   * Applies `action` to every run the filter matches (narrowed to the action's statuses when it
   * names none), oldest first, and resolves what was done. A run in a status the action does not
   * take, or one that changed since it was listed, is refused with the reason; an error of
   * another kind is counted as failed and the walk goes on. Safe to interrupt (`signal`) and run
   * again.
   */
  async run(
    action: BulkRunActionName,
    filter: RunFilter = {},
    options: BulkOptions = {},
  ): Promise<BulkSummary> {
    const spec = BULK_RUN_ACTIONS[action] as BulkRunAction | undefined;
    if (spec === undefined) {
      throw new ConfigError(
        `client.bulk.run: unknown action '${String(action)}'; use one of ${Object.keys(BULK_RUN_ACTIONS).join(', ')}`,
      );
    }
    if (filter !== undefined && 'cursor' in filter) {
      throw new ConfigError(
        'client.bulk.run: the filter has a cursor; a bulk action walks every page itself, so leave it out',
      );
    }
    const concurrency = checkedConcurrency(options.concurrency);
    const query: RunQuery = { ...effectiveFilter(filter, action), order: 'oldest', limit: PAGE };
    // Checked before anything is done: an invalid filter changes nothing.
    let page = await this.client.runs.list(query);
    const tally = new Tally(action, options);
    for (;;) {
      await eachBounded(page.runs, concurrency, options.signal, async (run) => {
        if (!spec.statuses.includes(run.status)) {
          tally.refuse(run.runId, wrongState(action, run.status, spec.statuses));
          return;
        }
        try {
          await spec.act(this.client, run, options);
          tally.succeed(run.runId);
        } catch (err) {
          if (err instanceof RunStateError || err instanceof NotFoundError)
            tally.refuse(run.runId, err.message);
          else tally.fail(run.runId, err);
        }
      });
      if (options.signal?.aborted || page.cursor === undefined) break;
      page = await this.client.runs.list({ ...query, cursor: page.cursor });
    }
    return tally.summary(options.signal?.aborted === true);
  }

  /**
   * Redrives every dead letter (or those with `filter.code`), newest first: each letter's original
   * message goes back on the run queue and the letter is removed. A letter whose message does not
   * decode (or was cut to fit the bus) is refused, not redriven: it would only be dead-lettered
   * again; look at it with `client.deadLetters.show` and purge it. A letter already redriven or
   * purged by someone else is refused as gone. Letters dead-lettered during the walk are not
   * taken (a redriven message that fails again is not redriven in a loop).
   */
  async redriveDeadLetters(filter: DeadLetterFilter = {}, options: BulkOptions = {}): Promise<BulkSummary> {
    const concurrency = checkedConcurrency(options.concurrency);
    const tally = new Tally('redrive', options);
    let cursor: string | undefined;
    do {
      const page = await this.client.deadLetters.list({
        limit: PAGE,
        ...(cursor !== undefined && { cursor }),
      });
      const letters = page.letters.filter((l) => filter.code === undefined || l.code === filter.code);
      await eachBounded(letters, concurrency, options.signal, async (letter) => {
        const decoded = decodeDeadLetter(letter);
        if (!decoded.readable) {
          tally.refuse(letter.id, unreadableLetter(letter.id, decoded.problem));
          return;
        }
        try {
          await this.client.deadLetters.redrive(letter.id);
          tally.succeed(letter.id);
        } catch (err) {
          if (err instanceof NotFoundError || err instanceof ConfigError)
            tally.refuse(letter.id, err.message);
          else tally.fail(letter.id, err);
        }
      });
      cursor = page.cursor;
    } while (cursor !== undefined && options.signal?.aborted !== true);
    return tally.summary(options.signal?.aborted === true);
  }
}

/** Why a dead letter is not redriven: its message does not decode. */
export function unreadableLetter(id: string, problem: string): string {
  return (
    `dead letter ${id} is not redriven: ${problem}; redriven, it would only be dead-lettered ` +
    'again. Look at it (dlq show), fix the producer, and purge it'
  );
}

/** Why a run is refused: its status is not one the action takes. */
export function wrongState(action: string, status: RunStatus, statuses: readonly RunStatus[]): string {
  return `${action} takes runs that are ${statuses.join(', ')}; this one is ${status}`;
}

function effectiveFilter(filter: RunFilter, action: BulkRunActionName | undefined): RunFilter {
  const { cursor: _cursor, ...rest } = filter as RunQuery;
  if (action === undefined || rest.status !== undefined) return rest;
  const statuses = (BULK_RUN_ACTIONS[action] as BulkRunAction | undefined)?.statuses;
  if (statuses === undefined) {
    throw new ConfigError(
      `client.bulk: unknown action '${String(action)}'; use one of ${Object.keys(BULK_RUN_ACTIONS).join(', ')}`,
    );
  }
  return { ...rest, status: statuses };
}

function checkedConcurrency(concurrency: number | undefined): number {
  const value = concurrency ?? 8;
  if (!Number.isInteger(value) || value < 1 || value > MAX_CONCURRENCY) {
    throw new ConfigError(
      `client.bulk: concurrency is ${String(concurrency)}; give a whole number from 1 to ${MAX_CONCURRENCY}`,
    );
  }
  return value;
}

/** Runs `work` over `items`, at most `limit` at once, taking no new item once `signal` aborted. */
async function eachBounded<T>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal | undefined,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length && signal?.aborted !== true) {
      const item = items[next++]!;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

class Tally {
  private readonly succeeded: string[] = [];
  private readonly refused: BulkRefusal[] = [];
  private readonly failed: BulkFailure[] = [];

  constructor(
    private readonly action: string,
    private readonly options: BulkOptions,
  ) {}

  succeed(id: string): void {
    this.succeeded.push(id);
    this.report(id);
  }

  refuse(id: string, reason: string): void {
    this.refused.push({ id, reason });
    this.report(id);
  }

  fail(id: string, err: unknown): void {
    this.failed.push({ id, error: err instanceof Error ? err.message : String(err) });
    this.report(id);
  }

  summary(interrupted: boolean): BulkSummary {
    return {
      action: this.action,
      matched: this.succeeded.length + this.refused.length + this.failed.length,
      succeeded: this.succeeded,
      refused: this.refused,
      failed: this.failed,
      interrupted,
    };
  }

  private report(last: string): void {
    this.options.onProgress?.({
      done: this.succeeded.length + this.refused.length + this.failed.length,
      succeeded: this.succeeded.length,
      refused: this.refused.length,
      failed: this.failed.length,
      last,
    });
  }
}
