/**
 * A handle on one run, and the vocabulary of its calls. A handle is made by the client that
 * started or named the run, and by the sub-clients that start one (`client.timeTravel.fork`,
 * `retry`); it reaches them through {@link HandleClient}, its own type, so this module imports
 * neither client.ts nor the sub-clients.
 */
import type { QueryDefinition, UpdateDefinition } from '@baton/core';
import type { LeaseInfo, RunRecord } from '@baton/core/adapter';
import type { UpdateOptions } from './update-call.js';
import type { QueryArguments } from './queries.js';

export interface RunDescription extends RunRecord {
  lease: LeaseInfo | undefined;
  /** Set for a child workflow (`ctx.startChild`): the parent run and the step that started it. */
  parent?: { runId: string; seq: number };
}

/** Options of `client.result`. */
export interface ResultOptions {
  /** Give up with TimeoutError after this long. @defaultValue no limit */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * How long a run the store does not know (no record, no tombstone) is waited for before
   * NotFoundError: its start message may still be queued, or it was never started. A run the
   * retention sweep deleted fails at once with RunDeletedError instead, while its tombstone lives.
   * @defaultValue the client's `unknownRunMs` (30 s) for `client.result(runId)`; the timeout for
   * the handle `start()` returned
   */
  unknownRunMs?: number;
  /**
   * When the run's start was sent (ms since the epoch). A data loss the store recorded after it
   * (Store.lastDataLoss) means the run most likely went with the data: an unknown run is then
   * waited for no longer than the client's `unknownRunMs` (its start may still be queued), and
   * fails with RunLostError. The handle `start()` returned sets it.
   */
  startedAt?: number;
}

/** Where a fork starts: exactly one of the two. */
export interface ForkPoint {
  /** A kept checkpoint's `seq` (see `client.timeTravel.checkpoints(runId)`): its entries are the prefix. */
  fromCheckpoint?: number;
  /** A journal record's position (see `client.history(runId)`): every entry up to it is the prefix. */
  fromJournalPosition?: number;
}

/** Options of `client.timeTravel.fork`: exactly one of `fromCheckpoint` and `fromJournalPosition`. */
export interface ForkOptions extends ForkPoint {
  /** The new run's id. @defaultValue a new random id */
  runId?: string;
}

/** What a handle uses of its client (a `Client` is one). */
export interface HandleClient {
  result(runId: string, options?: ResultOptions): Promise<unknown>;
  describe(runId: string): Promise<RunDescription>;
  update(
    runId: string,
    update: string | UpdateDefinition<unknown, unknown>,
    args: unknown,
    options?: UpdateOptions,
  ): Promise<unknown>;
  query<Result, Args>(
    runId: string,
    query: QueryDefinition<Result, Args>,
    ...rest: QueryArguments<Args>
  ): Promise<Result>;
  readonly runs: {
    pause(runId: string, reason?: string): Promise<'paused' | 'pause-requested'>;
    resume(runId: string): Promise<boolean>;
  };
  readonly timeTravel: {
    fork<O>(runId: string, options: ForkOptions): Promise<RunHandle<O>>;
    retry<O>(runId: string): Promise<RunHandle<O>>;
  };
}

/** A handle on one run; `O` is its workflow's result type. */
export class RunHandle<O = unknown> {
  constructor(
    private readonly client: HandleClient,
    readonly runId: string,
    /** When this client sent the run's start (ms since the epoch), when it did. */
    readonly startedAt?: number,
  ) {}

  /**
   * Waits for the outcome: the result, or WorkflowFailedError / CancelledError / TimeoutError /
   * RunDeletedError / RunLostError. This client sent the run's start, so a run the store does not
   * know yet is waited for until the timeout (its start message may sit in a long queue), unless
   * the store lost it: it was seen and is gone, or the store recorded a data loss after the start.
   */
  result(options?: ResultOptions): Promise<O> {
    return this.client.result(this.runId, {
      unknownRunMs: Infinity,
      ...(this.startedAt !== undefined && { startedAt: this.startedAt }),
      ...options,
    }) as Promise<O>;
  }

  describe(): Promise<RunDescription> {
    return this.client.describe(this.runId);
  }

  /**
   * `client.update` of this run. A run this client started is waited for until the timeout when
   * the store does not know it yet (its start may still be queued).
   */
  update<Args, Result>(
    update: UpdateDefinition<Args, Result>,
    args: NoInfer<Args>,
    options?: UpdateOptions,
  ): Promise<Result>;
  update<Result = unknown>(name: string, args?: unknown, options?: UpdateOptions): Promise<Result>;
  update(
    update: string | UpdateDefinition<unknown, unknown>,
    args?: unknown,
    options: UpdateOptions = {},
  ): Promise<unknown> {
    const waitForStart = this.startedAt !== undefined ? { unknownRunMs: options.timeoutMs ?? Infinity } : {};
    return this.client.update(this.runId, update, args, { ...waitForStart, ...options });
  }

  /** `client.query` of this run: its query handler's answer, without changing the run (docs/queries.md). */
  query<Result, Args>(query: QueryDefinition<Result, Args>, ...rest: QueryArguments<Args>): Promise<Result> {
    return this.client.query(this.runId, query, ...rest);
  }

  /** `client.runs.pause` of this run. */
  pause(reason?: string): Promise<'paused' | 'pause-requested'> {
    return this.client.runs.pause(this.runId, reason);
  }

  /** `client.runs.resume` of this run. */
  resume(): Promise<boolean> {
    return this.client.runs.resume(this.runId);
  }

  /** `client.timeTravel.fork` of this run: a run of the same workflow, so a handle of the same type. */
  fork(options: ForkOptions): Promise<RunHandle<O>> {
    return this.client.timeTravel.fork<O>(this.runId, options);
  }

  /** `client.timeTravel.retry` of this run. */
  retry(): Promise<RunHandle<O>> {
    return this.client.timeTravel.retry<O>(this.runId);
  }
}
