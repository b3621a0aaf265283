/**
 * Workflow and activity definitions: the public API users write against (DESIGN §2).
 */
import type { Duration } from './duration.js';
import { ConfigError } from './errors.js';
import type { RetryPolicy } from './retry.js';

/** What an activity receives beside its input. */
export interface ActivityIO {
  /** Stable across retries, crashes and resumes: `<runId>:<seq>`. Pass it to every external system. */
  readonly idempotencyKey: string;
  /** 1 on the first attempt of this execution; counts up with retries. */
  readonly attempt: number;
  /** Aborted when the lease is lost, the attempt times out, the run is cancelled or the worker stops. */
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly activity: string;
  /** The step's sequence number within the run. */
  readonly seq: number;
  /**
   * Reports progress of a long activity to the worker's observers (`onEvent`). It does not extend
   * the lease: the worker renews the leases of all its runs on its own.
   */
  heartbeat(details?: unknown): void;
}

export interface ActivityOptions {
  /** Retry policy for failed attempts. @defaultValue `{ maxAttempts: 3, initialDelayMs: 100, maxDelayMs: 10_000 }` */
  retry?: RetryPolicy;
  /** Per-attempt timeout; the attempt's `signal` is aborted and the attempt fails (retryable). @defaultValue none */
  timeoutMs?: number;
  /** Write a checkpoint right after this activity completes. @defaultValue false */
  checkpoint?: boolean;
  /**
   * Whether running twice with the same idempotency key is harmless. When false, `ActivityStarted`
   * is journaled before each execution so a resume can tell "never started" from "in doubt", and
   * `reconcile` is consulted for an in-doubt step. @defaultValue true, or false when `reconcile` is set
   */
  idempotent?: boolean;
}

export interface ActivityDefinition<I = unknown, O = unknown> extends ActivityOptions {
  readonly kind: 'activity';
  readonly name: string;
  run(input: I, io: ActivityIO): Promise<O> | O;
  /**
   * Called on resume when the journal shows this activity started but never completed. Return the
   * result if the external system shows the effect happened, or undefined to run it again (with
   * the same idempotency key).
   */
  reconcile?(input: I, io: ActivityIO): Promise<O | undefined> | O | undefined;
}

export interface WaitForSignalOptions {
  /** Give up after this long with SignalTimeoutError. @defaultValue wait forever */
  timeout?: Duration;
}

/** The workflow's handle on the durable world. Every non-deterministic thing goes through it. */
export interface WorkflowContext {
  readonly runId: string;
  readonly workflow: string;
  readonly version: number;
  /** True while the executor is still returning journaled results (no live step has run yet). */
  readonly isReplaying: boolean;
  /** Runs a defined activity; its result is journaled before the workflow continues. */
  run<I, O>(activity: ActivityDefinition<I, O>, input: I, options?: ActivityOptions): Promise<O>;
  /** Runs an inline activity. */
  activity<O>(name: string, fn: (io: ActivityIO) => Promise<O> | O, options?: ActivityOptions): Promise<O>;
  /** A durable timer: survives crashes; the run is suspended (no worker held) while it waits. */
  sleep(duration: Duration): Promise<void>;
  /** Waits for a signal sent with `client.signal(runId, name, payload)`; durable like sleep. */
  waitForSignal<T = unknown>(name: string, options?: WaitForSignalOptions): Promise<T>;
  /** Journaled wall-clock time (ms): the same value on every replay. */
  now(): number;
  /** Journaled random number in [0, 1). */
  random(): number;
  /** Journaled random UUID v4. */
  uuid(): string;
}

export interface WorkflowDefinition<I = unknown, O = unknown> {
  readonly kind: 'workflow';
  readonly name: string;
  readonly version: number;
  run(ctx: WorkflowContext, input: I): Promise<O>;
}

const NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

function checkName(what: string, name: string): void {
  if (!NAME_PATTERN.test(name)) {
    throw new ConfigError(
      `${what} name '${name}' is invalid: use 1-128 characters from letters, digits, '_', '.', ':' and '-'`,
    );
  }
}

/** Defines an activity. See {@link ActivityDefinition}. */
export function defineActivity<I, O>(spec: Omit<ActivityDefinition<I, O>, 'kind'>): ActivityDefinition<I, O> {
  checkName('activity', spec.name);
  if (spec.timeoutMs !== undefined && !(spec.timeoutMs > 0)) {
    throw new ConfigError(`activity ${spec.name}: timeoutMs must be a positive number of milliseconds`);
  }
  return Object.freeze({ ...spec, kind: 'activity' as const });
}

/** Defines a workflow. `version` is a positive integer; bump it when the step order changes. */
export function defineWorkflow<I, O>(spec: Omit<WorkflowDefinition<I, O>, 'kind'>): WorkflowDefinition<I, O> {
  checkName('workflow', spec.name);
  if (!Number.isInteger(spec.version) || spec.version < 1) {
    throw new ConfigError(`workflow ${spec.name}: version must be a positive integer, got ${spec.version}`);
  }
  return Object.freeze({ ...spec, kind: 'workflow' as const });
}

/** Whether ActivityStarted is journaled before each execution of this activity. */
export function journalsStart(def: ActivityOptions & { reconcile?: unknown }): boolean {
  return def.idempotent === undefined ? def.reconcile !== undefined : !def.idempotent;
}

/** A workflow of any input and output type, as registries hold them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyWorkflowDefinition = WorkflowDefinition<any, any>;
