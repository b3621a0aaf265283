/**
 * The errors a workflow author throws or catches: an activity's failure or timeout, a cancel, a
 * signal that timed out, a child that failed, a value with no JSON form, an input its schema
 * refused. Their base classes and the serialized form are in shared/errors.ts; what waiting for a
 * run's outcome raises (WorkflowFailedError, RunDeletedError, ...) is @baton/client's.
 */
import {
  BatonError,
  type BatonErrorOptions,
  deserializeError,
  safeStringify,
  type SerializedError,
} from '../shared/errors.js';

/**
 * A value Baton must journal or send (an activity's or workflow's result, a run's input, a signal's
 * payload) has no JSON form: a BigInt, a circular reference, a toJSON that throws. Never
 * retryable: the same value fails the same way every time. An activity result fails its step
 * (the activity is not run again), a workflow result fails its run, and the client refuses an
 * input or payload before anything is sent.
 */
export class UnencodableValueError extends BatonError {
  constructor(
    /** What held the value, e.g. `result of activity charge_card (step #3)`. */
    readonly what: string,
    /** What in it has no JSON form, e.g. `a BigInt at $.amount`. */
    readonly problem: string,
    options?: Omit<BatonErrorOptions, 'retryable'>,
  ) {
    super(
      'BATON_UNENCODABLE',
      `${what} cannot be encoded as JSON: ${problem}. Return plain JSON data (strings, finite numbers, ` +
        'booleans, null, arrays and plain objects): convert a BigInt to a string or number, break ' +
        'circular references, and make toJSON return such data',
      { ...options, retryable: false },
    );
  }
}

/**
 * `client.start` refused an input that the workflow's input schema (`defineWorkflow({ input })`)
 * rejected, or a start field no worker would accept (`field` names it: the checks of
 * start-fields.ts, the worker's own); or `client.signal` refused a payload its signal's schema
 * (`defineSignal(name, { schema })`) rejected. Nothing was sent. Terminal: the same call fails the
 * same way again.
 */
export class InvalidInputError extends BatonError {
  /**
   * What was refused: `'input'` (the input schema's issues, the constructor's default), a start
   * field (`'workflow'`, `'version'`, `'idempotencyKey'`, `'runId'`), a signal's `'payload'`, an
   * update's `'args'` (`client.update`, against its update's schema) or a durable promise's
   * `'value'` (`client.promises.resolve`).
   */
  readonly field: InvalidInputField;
  /** The signal, for a refused signal payload; absent otherwise. */
  readonly signal: string | undefined;

  constructor(
    /** The workflow as `name@version` (as given, for a start refused on its name or version); '' for a signal. */
    readonly workflow: string,
    /** Each problem as `$.path: message`, in the validator's order (a start field: one, its problem). */
    readonly issues: readonly string[],
    /** For anything but an input that fails its schema: the field and the whole message. */
    refused?: { field: Exclude<InvalidInputField, 'input'>; message: string; signal?: string },
  ) {
    super(
      'BATON_INVALID_INPUT',
      refused?.message ??
        `input of workflow ${workflow} does not match its input schema: ${issues.join('; ')}. ` +
          'Fix the input (nothing was enqueued), or change the schema in defineWorkflow({ input })',
    );
    this.field = refused?.field ?? 'input';
    this.signal = refused?.signal;
  }
}

/** The part of a start, a signal, an update or a promise's completion that {@link InvalidInputError} refused. */
export type InvalidInputField =
  'input' | 'workflow' | 'version' | 'idempotencyKey' | 'runId' | 'payload' | 'args' | 'value';

/** The run was cancelled; raised by the next ctx call after a cancel request. */
export class CancelledError extends BatonError {
  constructor(
    readonly runId: string,
    readonly reason = 'cancel requested',
  ) {
    super('BATON_CANCELLED', `run ${runId} was cancelled: ${reason}`);
  }
}

/** An activity attempt exceeded its `timeoutMs`. Retryable. */
export class ActivityTimeoutError extends BatonError {
  constructor(
    readonly activity: string,
    readonly timeoutMs: number,
  ) {
    super('BATON_ACTIVITY_TIMEOUT', `activity ${activity} did not finish within ${timeoutMs} ms`, {
      retryable: true,
    });
  }
}

/** An activity failed for good (retries exhausted or a non-retryable error); `cause` is the last error. */
export class ActivityFailedError extends BatonError {
  constructor(
    readonly activity: string,
    readonly seq: number,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(
      'BATON_ACTIVITY_FAILED',
      `activity ${activity} (step #${seq}) failed after ${attempts} attempt(s): ${describeCause(cause)}`,
      { cause },
    );
  }
}

/** Throw from an activity to stop retrying at once. */
export class NonRetryableError extends BatonError {
  constructor(message: string, options?: Omit<BatonErrorOptions, 'retryable'>) {
    super('BATON_NON_RETRYABLE', message, { ...options, retryable: false });
  }
}

/** A `waitForSignal` with a timeout ran out before the signal arrived. */
export class SignalTimeoutError extends BatonError {
  constructor(
    readonly runId: string,
    readonly signalName: string,
  ) {
    super('BATON_SIGNAL_TIMEOUT', `run ${runId}: signal '${signalName}' did not arrive before its timeout`);
  }
}

/**
 * A durable promise (`ctx.promise`) was rejected: by `client.promises.reject(token, error)`, or
 * because the run's schema refused the value it was resolved with. `failure` is the error given
 * (or the schema's issues); it is the `cause` too.
 */
export class PromiseRejectedError extends BatonError {
  constructor(
    readonly runId: string,
    /** The step of `ctx.promise` that made it. */
    readonly seq: number,
    readonly failure: SerializedError,
  ) {
    super(
      'BATON_PROMISE_REJECTED',
      `run ${runId}: the durable promise of step #${seq} was rejected: ${failure.name}: ${failure.message}`,
      { cause: deserializeError(failure) },
    );
  }
}

/** A durable promise (`ctx.promise`) with a timeout was not completed in time. */
export class PromiseTimeoutError extends BatonError {
  constructor(
    readonly runId: string,
    /** The step of `ctx.promise` that made it. */
    readonly seq: number,
  ) {
    super(
      'BATON_PROMISE_TIMEOUT',
      `run ${runId}: the durable promise of step #${seq} was not completed before its timeout`,
    );
  }
}

/**
 * A child workflow (`ctx.startChild`, `ctx.executeChild`) ended without a result: it failed or was
 * cancelled. `failure` is what ended it; `childRunId` names the run that ended (the last of the
 * child's chain when it continued as new).
 */
export class ChildWorkflowError extends BatonError {
  constructor(
    readonly childRunId: string,
    readonly workflow: string,
    readonly status: 'failed' | 'cancelled',
    readonly failure: SerializedError,
  ) {
    super(
      'BATON_CHILD_WORKFLOW_FAILED',
      `child run ${childRunId} (${workflow}) ${status}: ${failure.name}: ${failure.message}`,
      { cause: deserializeError(failure) },
    );
  }
}

/** True when the error says retrying cannot help. */
export function isNonRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { retryable?: unknown }).retryable === false;
}

function describeCause(cause: unknown): string {
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : safeStringify(cause);
}
