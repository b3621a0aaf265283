/**
 * Workflow and activity definitions: the public API users write against (DESIGN §2).
 */
import type { Duration } from './duration.js';
import { ConfigError } from '../shared/errors.js';
import {
  checkAttributeDeclaration,
  type AttributeDeclaration,
  type AttributeUpdate,
} from '../shared/attributes.js';
import type { RetryPolicy } from './retry.js';
import type { SignalDefinition } from './signal.js';
import type { UpdateDefinition, UpdateHandlerOptions } from './update.js';
import type { QueryDefinition } from './query.js';
import { workflowNameProblem, workflowVersionProblem } from './start-fields.js';
import type { ChainResult, ContinueAsNew, ContinueAsNewOptions } from './continue-as-new.js';
import type { HistoryInfo } from '../shared/journal.js';
import type { ChildHandle, ChildWorkflowOptions } from './child-workflows.js';
import type { DurablePromise, PromiseOptions } from './promise.js';
import type { ActivityStream, WorkflowStream } from './streams.js';
import { checkActivityRateLimit, type ActivityRateLimit } from './rate-limit.js';
import {
  isStandardSchema,
  type StandardSchemaInput,
  type StandardSchemaOutput,
  type StandardSchemaV1,
} from './standard-schema.js';

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
  /**
   * The run stream `name` (docs/streams.md), for this attempt: `await io.stream('tokens').write(t)`
   * resolves once the chunk is durable on the bus, and readers (`client.stream`, `baton runs
   * tail`, the HTTP API's server-sent events) see it once. Chunks carry this step and attempt; a
   * retried attempt's first write supersedes the earlier attempts' chunks with a `reset` item.
   */
  stream<T = unknown>(name: string): ActivityStream<T>;
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
  /**
   * Freshness: when a resume replays this step and its journaled result is older than this
   * (by the journal entry's `at` against the worker's clock), the activity runs again with the
   * same idempotency key and the new result replaces the old one, in the old one's place. Steps
   * journaled after it keep their results. Only for idempotent activities: defineActivity (and
   * ctx.run with these options) refuses it on a non-idempotent one, since re-running those is
   * exactly what their journaling prevents. @defaultValue none (a journaled result never ages)
   */
  maxAgeMs?: number;
}

export interface ActivityDefinition<I = unknown, O = unknown> extends ActivityOptions {
  readonly kind: 'activity';
  readonly name: string;
  /**
   * A limit from `defineRateLimit`, or `{ limit, key: (input) => string }` for one window per key:
   * every live attempt takes a place under it first, fleet-wide; a refused one waits without
   * holding the worker's slot (docs/rate-limits.md). A journaled step never asks. @defaultValue none
   */
  readonly rateLimit?: ActivityRateLimit<I> | undefined;
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

/**
 * The workflow's handle on the durable world. Every non-deterministic thing goes through it. `A`
 * is the workflow's declared search attributes (`defineWorkflow({ attributes })`), which type
 * {@link WorkflowContext.setAttributes}; without a declaration any valid name is accepted.
 */
export interface WorkflowContext<A extends AttributeDeclaration = AttributeDeclaration> {
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
  /**
   * Waits for a signal sent with `client.signal(runId, signal, payload)`; durable like sleep.
   * Given a {@link SignalDefinition} (recommended, see `defineSignal`) it resolves to the
   * definition's payload type; given a plain name, to `unknown` or the type argument. A definition
   * with a schema checks each payload it receives: one that fails is skipped (a warning names the
   * signal, the run and the issues; the signal stays unread) and the wait goes on, so the workflow
   * only ever sees the schema's output. A payload journaled before is replayed as it was.
   */
  waitForSignal<T = unknown>(
    signal: SignalDefinition<T, unknown> | string,
    options?: WaitForSignalOptions,
  ): Promise<T>;
  /**
   * Answers the update `update` (`client.update(runId, update, args)`) with `handler`'s result.
   * Register handlers at the top of the workflow, before its first await: a request that finds no
   * handler when the run is next idle is rejected as unknown. An update is checked (the
   * definition's schema and validator, then `options.validate`) before it is journaled; a refusal
   * is the caller's answer and leaves no trace. An accepted one is journaled and its handler runs
   * beside the workflow's code, as deterministic as it is: it may `ctx.run` activities, `sleep`
   * and wait for signals, and it is run again on replay at the same point, so what it changes is
   * there again. It is handled once whatever fails: a crash re-runs it from its journal, an update
   * id seen twice is answered with the kept result. A run ends only once the handlers it accepted
   * have settled. Registering a name again replaces its handler.
   */
  onUpdate<Args, Result>(
    update: UpdateDefinition<Args, Result> | string,
    handler: (args: Args) => Promise<Result> | Result,
    options?: UpdateHandlerOptions<Args>,
  ): void;
  /**
   * Makes a durable promise: `p.token` goes to an outside system (an approval link, a payment
   * provider's callback), which completes it once with `client.promises.resolve(token, value)` or
   * `reject(token, error)`, over the HTTP API (`POST /v1/promises/{token}/resolve`) or with `baton
   * promises resolve`; the workflow awaits `p.value`, suspended meanwhile like on a signal. The
   * token is drawn once and journaled, so every replay has the same one (docs/promises.md).
   */
  promise<T = unknown>(options?: PromiseOptions<T>): DurablePromise<T>;
  /**
   * Sets search attributes on this run (docs/search-attributes.md): typed fields the store indexes,
   * so operators list, count and act on runs by them (`baton runs list --attr customerId=42`). A
   * string is a keyword, a number a number, a boolean a boolean, a Date a time (for an attribute
   * declared `time`, an ISO 8601 string or ms too); null removes the attribute; names left out keep
   * their values. A step: the store holds the values once it resolves, and the change is journaled,
   * so a replay writes nothing again. An invalid name or value, an undeclared name (when the
   * workflow declares its attributes) or more than 20 attributes on the run rejects with
   * ConfigError naming the attribute, before anything is written.
   */
  setAttributes(values: AttributeUpdate<A>): Promise<void>;
  /** Journaled wall-clock time (ms): the same value on every replay. */
  now(): number;
  /** Journaled random number in [0, 1). */
  random(): number;
  /** Journaled random UUID v4. */
  uuid(): string;
  /**
   * The run's history so far: its entries (`length`), their encoded `bytes`, and `suggested`, true
   * once either reached the worker's soft limit. A long loop ends with `return
   * ctx.continueAsNew(next)` when `suggested` says so, before the hard limit fails the run. A
   * step, journaled like ctx.now(): every replay returns the values first seen at this point
   * (docs/continue-as-new.md, "Bounded histories").
   */
  historyInfo(): HistoryInfo;
  /**
   * The run stream `name` (docs/streams.md): `ctx.stream<T>('progress').write(value)` from workflow
   * code. Not a step: writes journal nothing, return at once, and are appended by the worker in
   * order, durable before the run suspends or ends; a replay writes none of them twice. A name is
   * 1 to 64 letters, digits, '-' or '_'; a value is JSON of at most 256 KiB (else it throws).
   */
  stream<T = unknown>(name: string): WorkflowStream<T>;
  /**
   * Changes a workflow in place: `if (ctx.patched('fix-42')) newCode() else oldCode()`. True for
   * runs that reach this call live (a PatchMarker is journaled) and on every replay of them; false
   * for runs whose journal was recorded by the old code past this point, so they replay the old
   * branch. Not a step: it takes no sequence number, so adding it shifts no recorded step. The
   * first answer for a `changeId` holds for the rest of the execution.
   */
  patched(changeId: string): boolean;
  /**
   * Marks a patch whose old branch is gone from the code (every run that could take it has
   * finished): journals the marker for live runs, so workers still running `patched(changeId)`
   * replay them on the new branch, and does nothing on replay.
   */
  deprecatePatch(changeId: string): void;
  /**
   * Ends this run and starts its successor, a run of the same workflow with a fresh history and
   * `input`: `return ctx.continueAsNew(next)`. Only its returned value counts (calling it and not
   * returning it does nothing). The successor's run id is derived from this run's, so it starts
   * once however often this run's end is replayed; `client.result()` on any run of the chain
   * resolves to the last one's result (docs/continue-as-new.md).
   */
  continueAsNew<I>(input: I, options?: ContinueAsNewOptions): ContinueAsNew<I>;
  /**
   * Starts a child workflow run and returns its handle once the start is durable; the child runs
   * on any worker that registers it. The child's run id derives from this run's id and this step,
   * so a resumed parent never starts a second child. `handle.result()` waits durably (the parent
   * suspends and holds no worker) and throws ChildWorkflowError when the child failed or was
   * cancelled. A child still running when this run ends is cancelled unless started with
   * `parentClosePolicy: 'abandon'` (docs/child-workflows.md).
   */
  startChild<W extends AnyWorkflowDefinition>(
    workflow: W,
    input: WorkflowInput<W>,
    options?: ChildWorkflowOptions,
  ): Promise<ChildHandle<WorkflowOutput<W>>>;
  /** `startChild` and then its handle's `result()`: the child's result, or ChildWorkflowError. */
  executeChild<W extends AnyWorkflowDefinition>(
    workflow: W,
    input: WorkflowInput<W>,
    options?: ChildWorkflowOptions,
  ): Promise<WorkflowOutput<W>>;
  /**
   * Answers the query `query` with `handler` from now on: `client.query(runId, query, args)` gets
   * what it returns (docs/queries.md). The handler reads the workflow's state and must change
   * nothing: it is synchronous (a promise is refused), never journaled, and every ctx call inside
   * it (run, sleep, waitForSignal, now, ...) throws, failing that query only; the run goes on as if
   * it had not been asked. A run no worker holds (suspended, finished) is answered by replaying
   * its journal without running anything, up to its end. Registering a name again replaces its
   * handler. Not a step: it takes no sequence number, so adding it changes no recorded run.
   */
  onQuery<Result, Args>(query: QueryDefinition<Result, Args>, handler: (args: Args) => Result): void;
}

/**
 * A workflow: `I` is the input its code receives, `O` its result, and `StartInput` what
 * `client.start` accepts (the same as `I` unless an input schema transforms the value).
 */
export interface WorkflowDefinition<I = unknown, O = unknown, StartInput = I> {
  readonly kind: 'workflow';
  readonly name: string;
  readonly version: number;
  /**
   * A Standard Schema (zod, valibot, ...) that `client.start` validates the input with before
   * anything is sent; the run receives the schema's output value. @defaultValue none: not checked
   */
  readonly input?: StandardSchemaV1<StartInput, I> | undefined;
  /**
   * At most `limit` runs of this workflow with the same `key(input)` run at once, fleet-wide
   * (docs/concurrency-keys.md); the others wait in arrival order, suspended, and a run that
   * suspends (a sleep, a signal wait) gives its slot up until it wakes. @defaultValue no limit
   */
  readonly concurrency?: ConcurrencyOptions<I> | undefined;
  /**
   * The search attributes the workflow sets, by name and type (`{ customerId: 'keyword' }`):
   * `ctx.setAttributes` then takes only these names, each with its type's values (checked by the
   * compiler and again when called), and a `time` attribute accepts an ISO 8601 string. Optional:
   * without it any valid name is accepted and a value's type is its JavaScript type.
   * @defaultValue none: not declared
   */
  readonly attributes?: AttributeDeclaration | undefined;
  /**
   * The workflow's code. A property rather than a method so its parameter is checked
   * contravariantly: a definition for `{ a: string }` is not usable where `{}` is accepted.
   */
  readonly run: (ctx: WorkflowContext, input: I) => Promise<O>;
}

/** A workflow's concurrency limit per key ({@link WorkflowDefinition.concurrency}). */
export interface ConcurrencyOptions<I> {
  /** The key of a run (a customer id, say): deterministic, 1-256 characters. */
  readonly key: (input: I) => string;
  /** Runs with the same key that may run at once: a positive integer. */
  readonly limit: number;
}

/** What `client.start` accepts for a workflow definition. */
export type WorkflowInput<W> = W extends WorkflowDefinition<infer _I, infer _O, infer S> ? S : unknown;
/**
 * The result of a workflow definition (what its handle's `result()` resolves to): a run that
 * continued as new resolves to its last successor's result, so `ContinueAsNew` is left out.
 */
export type WorkflowOutput<W> =
  W extends WorkflowDefinition<infer _I, infer O, infer _S> ? ChainResult<O> : unknown;

/** The fields `defineWorkflow` takes when the input type comes from a schema. */
export interface SchemaWorkflowSpec<
  Schema extends StandardSchemaV1,
  O,
  A extends AttributeDeclaration = AttributeDeclaration,
> {
  readonly name: string;
  readonly version: number;
  /** Validated in `client.start`; the run's input type is the schema's output type. */
  readonly input: Schema;
  readonly concurrency?: ConcurrencyOptions<StandardSchemaOutput<Schema>>;
  /** The search attributes the workflow sets ({@link WorkflowDefinition.attributes}). */
  readonly attributes?: A;
  run(ctx: WorkflowContext<A>, input: StandardSchemaOutput<Schema>): Promise<O>;
}

/** The fields `defineWorkflow` takes when the input type comes from `run`'s parameter. */
type PlainWorkflowSpec<I, O, A extends AttributeDeclaration> = Omit<
  WorkflowDefinition<I, O>,
  'kind' | 'input' | 'attributes' | 'run'
> & {
  readonly attributes?: A;
  readonly run: (ctx: WorkflowContext<A>, input: I) => Promise<O>;
};

/** The pattern, and the version rule below, are the ones the client and worker check (start-fields.ts). */
function checkName(what: string, name: string): void {
  if (workflowNameProblem(name) !== undefined) {
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
  checkFreshness(spec.name, spec);
  checkActivityRateLimit(spec.name, spec.rateLimit);
  return Object.freeze({ ...spec, kind: 'activity' as const });
}

/**
 * Rejects `maxAgeMs` where it cannot apply: on a non-idempotent activity a freshness re-run would
 * repeat the side effect the ActivityStarted journaling exists to protect, so it is refused rather
 * than silently ignored. Called for definitions and for ctx.run's per-call options.
 */
export function checkFreshness(name: string, options: ActivityOptions & { reconcile?: unknown }): void {
  if (options.maxAgeMs === undefined) return;
  if (!(typeof options.maxAgeMs === 'number' && options.maxAgeMs > 0)) {
    throw new ConfigError(
      `activity ${name}: maxAgeMs must be a positive number of milliseconds, got ${String(options.maxAgeMs)}`,
    );
  }
  if (journalsStart(options)) {
    throw new ConfigError(
      `activity ${name}: maxAgeMs is set but the activity is not idempotent ` +
        `(${options.idempotent === false ? 'idempotent: false' : 'it has a reconcile hook'}); ` +
        're-running it to refresh a result could repeat its side effect. Make it idempotent or drop maxAgeMs',
    );
  }
}

/**
 * Defines a workflow. `version` is a positive integer; bump it when the step order changes.
 * With `input: schema` (any Standard Schema), `client.start` validates the input and the input
 * type is the schema's; without it, the type of `run`'s `input` parameter is the input type.
 */
export function defineWorkflow<
  Schema extends StandardSchemaV1,
  O,
  const A extends AttributeDeclaration = AttributeDeclaration,
>(
  spec: SchemaWorkflowSpec<Schema, O, A>,
): WorkflowDefinition<StandardSchemaOutput<Schema>, O, StandardSchemaInput<Schema>>;
export function defineWorkflow<I, O, const A extends AttributeDeclaration = AttributeDeclaration>(
  spec: PlainWorkflowSpec<I, O, A>,
): WorkflowDefinition<I, O>;
export function defineWorkflow(spec: Omit<WorkflowDefinition, 'kind'>): WorkflowDefinition {
  checkName('workflow', spec.name);
  if (workflowVersionProblem(spec.version) !== undefined) {
    throw new ConfigError(`workflow ${spec.name}: version must be a positive integer, got ${spec.version}`);
  }
  if (spec.input !== undefined && !isStandardSchema(spec.input)) {
    throw new ConfigError(
      `workflow ${spec.name}: input must be a Standard Schema (an object with '~standard'.validate, ` +
        'as zod 3.24+, valibot and arktype schemas are), or left out',
    );
  }
  if (spec.attributes !== undefined) checkAttributeDeclaration(`workflow ${spec.name}`, spec.attributes);
  if (spec.concurrency !== undefined) {
    const { key, limit } = spec.concurrency;
    if (typeof key !== 'function' || !Number.isInteger(limit) || limit < 1) {
      throw new ConfigError(
        `workflow ${spec.name}: concurrency must be { key: (input) => string, limit: a positive integer }, ` +
          `got limit ${String(limit)} and a key that is ${typeof key === 'function' ? 'a function' : typeof key}`,
      );
    }
  }
  return Object.freeze({ ...spec, kind: 'workflow' as const });
}

/** Whether ActivityStarted is journaled before each execution of this activity. */
export function journalsStart(def: ActivityOptions & { reconcile?: unknown }): boolean {
  return def.idempotent === undefined ? def.reconcile !== undefined : !def.idempotent;
}

/** A workflow of any input and output type, as registries hold them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyWorkflowDefinition = WorkflowDefinition<any, any, any>;
