/**
 * Typed errors. One class per condition, named for what happens next. Every error has a stable
 * `code`, a `retryable` flag (may an activity retry loop try again?) and keeps its `cause`.
 */

export interface BatonErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  retryAfterMs?: number;
}

/** Base class of every error Baton raises. */
export class BatonError extends Error {
  /** Stable machine-readable identifier, e.g. `BATON_LEASE_LOST`. */
  readonly code: string;
  /** Whether repeating the failed operation may succeed. */
  readonly retryable: boolean;
  /** A hint for the retry loop, when the condition tells how long to wait. */
  readonly retryAfterMs: number | undefined;

  constructor(code: string, message: string, options: BatonErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * What a {@link ConfigError} says about one option, beside its message: a program that set the
 * option by another name (the worker process, from a BATON_* variable) names it its own way from
 * these, never by rewording the message.
 */
export interface ConfigErrorFields {
  /** The builder whose option it is, as its messages name it (`natsTransport`); absent for the Worker. */
  component?: string;
  /** The option as code names it (`prefix`, `poolSize`, `heartbeatMs`). */
  option?: string;
  /** What was given, safe to show: a URL with its secret masked, a password as `***`, never a key. */
  value?: string;
  /**
   * What would be accepted, as words that read after the value (`use a whole number from 1 to 5`);
   * when the value alone does not show why it is refused, that comes first (`it names no host; …`).
   */
  expected?: string;
  /**
   * Other options `expected` names by their code names (`leaseMs` in "must be below leaseMs/2"),
   * for a program that names options otherwise to name them in its own words too.
   */
  related?: readonly string[];
}

export interface ConfigErrorOptions extends BatonErrorOptions, ConfigErrorFields {}

/**
 * Configuration is invalid; raised at start-up, naming the option or variable and the fix. An
 * error about one option's value also carries it as fields ({@link ConfigErrorFields}; build it
 * with {@link invalidOption}).
 */
export class ConfigError extends BatonError {
  readonly component: string | undefined;
  readonly option: string | undefined;
  readonly value: string | undefined;
  readonly expected: string | undefined;
  readonly related: readonly string[] | undefined;

  constructor(message: string, options: ConfigErrorOptions = {}) {
    super('BATON_CONFIG', message, options);
    this.component = options.component;
    this.option = options.option;
    this.value = options.value;
    this.expected = options.expected;
    this.related = options.related;
  }
}

/**
 * The ConfigError for one option's bad value: its message is `<component>: <text>`, the text being
 * `message` (the builder's own wording) or else `<option> is <value>; <expected>`.
 *
 * @example
 * throw invalidOption({ component: 'natsTransport', option: 'replicas', value: '7', expected: 'use 1 to 5' });
 */
export function invalidOption(
  fields: ConfigErrorFields & { option: string; value: string; expected: string },
  message?: string,
  options?: BatonErrorOptions,
): ConfigError {
  const text = message ?? `${fields.option} is ${fields.value}; ${fields.expected}`;
  const full = fields.component === undefined ? text : `${fields.component}: ${text}`;
  return new ConfigError(full, { ...options, ...fields });
}

/**
 * On replay the workflow called something other than what the journal recorded at a sequence.
 * Terminal: the run is marked failed, never retried, because the code no longer matches history.
 */
export class NonDeterminismError extends BatonError {
  constructor(
    readonly runId: string,
    readonly seq: number,
    readonly expected: string,
    readonly found: string,
  ) {
    super(
      'BATON_NON_DETERMINISM',
      `run ${runId}: step #${seq} replayed as ${found} but the journal recorded ${expected}. ` +
        'The workflow code changed in a way that alters the order of ctx calls; deploy the old code for ' +
        'in-flight runs, or guard the change so old runs keep their old path.',
    );
  }
}

/** The worker no longer holds the run's lease (expired, or taken by a newer epoch). */
export class LeaseLostError extends BatonError {
  constructor(
    readonly runId: string,
    readonly epoch: number,
    detail = 'the lease expired or was taken over',
  ) {
    super('BATON_LEASE_LOST', `run ${runId}: lease epoch ${epoch} lost: ${detail}`);
  }
}

/** A write carried an epoch that is no longer the lease's epoch; it was refused. */
export class FencedWriteError extends BatonError {
  constructor(
    readonly runId: string,
    readonly epoch: number,
    readonly what: string,
  ) {
    super(
      'BATON_FENCED_WRITE',
      `run ${runId}: ${what} under epoch ${epoch} refused: a newer owner holds the run`,
    );
  }
}

/** A journal append found another writer's entry after the position it expected. */
export class JournalConflictError extends BatonError {
  constructor(
    readonly runId: string,
    readonly expectedLast: number,
    readonly actualLast: number,
  ) {
    super(
      'BATON_JOURNAL_CONFLICT',
      `run ${runId}: journal append expected last position ${expectedLast} but found ${actualLast}; ` +
        'another writer appended to this run',
    );
  }
}

/** Stored checkpoint or journal bytes could not be decoded or verified. */
export class CheckpointIntegrityError extends BatonError {
  constructor(
    readonly runId: string,
    readonly entry: string,
    detail: string,
    options?: BatonErrorOptions,
    code = 'BATON_INTEGRITY',
  ) {
    super(code, `run ${runId}: ${entry} failed verification: ${detail}`, options);
  }
}

/**
 * A stored checkpoint cannot be read at all: its record is not JSON, or its shape is wrong (entries
 * not a list, a field missing or of the wrong type), as a disk fault or a hand edit leaves it. A
 * subclass of CheckpointIntegrityError (nothing in it can be trusted); a worker first resumes from
 * an older kept checkpoint or the journal, and fails the run with this error only when neither
 * reads. `seq` is undefined when not even the sequence number could be read.
 */
export class CheckpointUnreadableError extends CheckpointIntegrityError {
  constructor(
    runId: string,
    readonly seq: number | undefined,
    detail: string,
    options?: BatonErrorOptions,
  ) {
    super(
      runId,
      seq === undefined ? 'a checkpoint' : `checkpoint ${seq}`,
      `${detail}; resume from an older checkpoint (client.checkpoints, client.fork) or restore the store's data`,
      options,
      'BATON_CHECKPOINT_UNREADABLE',
    );
  }
}

/**
 * A run's resume failed on this many claims in a row (each claim's epoch one above the last
 * failed one), so the worker stopped trying: the run is failed with the last error as `cause`
 * (docs/operations.md, "A run failed after repeated resume failures"). `client.retry` runs it again.
 */
export class ResumeFailedError extends BatonError {
  constructor(
    readonly runId: string,
    readonly failures: number,
    lastError: string,
    options?: BatonErrorOptions,
  ) {
    super(
      'BATON_RESUME_FAILED',
      `run ${runId}: its resume failed on ${failures} claims in a row (the limit, BATON_MAX_RESUME_FAILURES); ` +
        `last error: ${lastError}. Fix the cause, then call client.retry(runId)`,
      options,
    );
  }
}

/**
 * Stored data names a key this process does not hold (removed too early, or never configured
 * here). Nothing is wrong with the data: the worker leaves the run intact and retries later, so
 * an operator can put the key back. A subclass, so code that handles every integrity failure
 * still catches it.
 */
export class MissingKeyError extends CheckpointIntegrityError {
  constructor(
    runId: string,
    entry: string,
    /** The id of the missing key (ids are never secret; keys never appear in messages). */
    readonly keyId: string,
    readonly purpose: 'encryption' | 'signing',
    detail: string,
    options?: BatonErrorOptions,
  ) {
    super(runId, entry, detail, options, 'BATON_MISSING_KEY');
  }
}

/**
 * Data arrived in the clear where encryption is configured and plaintext is not allowed: written
 * before encryption was turned on, by a producer without the keys, or around Baton. A subclass, so
 * code that handles every integrity failure still catches it; the worker dead-letters a run
 * message refused this way with the code `unprotected-payload`.
 */
export class PlaintextRefusedError extends CheckpointIntegrityError {}

/**
 * A checkpoint was written with a schema version this worker cannot read: newer than it knows
 * (a newer Baton wrote it; upgrade this worker), or older with no registered migration. The data
 * is left intact for a worker that can read it.
 */
export class CheckpointSchemaError extends BatonError {
  constructor(
    readonly runId: string,
    readonly checkpointSeq: number,
    readonly schemaVersion: number,
    readonly supportedVersion: number,
    detail: string,
  ) {
    super(
      'BATON_CHECKPOINT_SCHEMA',
      `run ${runId}: checkpoint ${checkpointSeq} has schema version ${schemaVersion}, ` +
        `this worker reads up to version ${supportedVersion}: ${detail}`,
    );
  }
}

/**
 * A message or journal record is larger than the bus accepts. Never retryable: the same bytes will
 * never fit. A run whose journal entry is too large fails with this reason (and a dead letter
 * names it) rather than re-running the activity forever.
 */
export class PayloadTooLargeError extends BatonError {
  constructor(
    readonly what: string,
    readonly size: number,
    readonly limit: number,
  ) {
    super(
      'BATON_TOO_LARGE',
      `${what} is ${size} bytes, above the bus's limit of ${limit} bytes; pass large data by reference ` +
        '(store it elsewhere and journal its key) or raise the server limit (NATS max_payload)',
    );
  }
}

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
   * field (`'workflow'`, `'version'`, `'idempotencyKey'`, `'runId'`) or a signal's `'payload'`.
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

/** The part of a start or signal that {@link InvalidInputError} refused. */
export type InvalidInputField = 'input' | 'workflow' | 'version' | 'idempotencyKey' | 'runId' | 'payload';

/** Bytes that are not a message or entry this version understands. */
export class CodecError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_CODEC', message, options);
  }
}

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

/** The workflow itself threw (or rejected); carried in RunFailed and by `result()`. */
export class WorkflowFailedError extends BatonError {
  constructor(
    readonly runId: string,
    readonly failure: SerializedError,
  ) {
    super('BATON_WORKFLOW_FAILED', `run ${runId} failed: ${failure.name}: ${failure.message}`);
  }
}

/** A named run, workflow or version does not exist. */
export class NotFoundError extends BatonError {
  constructor(message: string) {
    super('BATON_NOT_FOUND', message);
  }
}

/**
 * The store no longer knows a run that existed: it lost its data (a Redis without persistence
 * restarted empty, say), or the run's records were removed by hand. A NotFoundError, so code that
 * handles "not found" still does; its message says what was found and what to do.
 */
export class RunLostError extends NotFoundError {
  constructor(
    readonly runId: string,
    /** Why the run is known to have existed (it was seen running, a loss was recorded after its start). */
    readonly evidence: string,
    /** The loss the store recorded, when it recorded one. */
    readonly loss?: { at: number; reason: string },
  ) {
    super(
      `run ${runId} is gone from the store: ${evidence}` +
        (loss === undefined
          ? ''
          : `; the store lost its data at ${new Date(loss.at).toISOString()} (${loss.reason})`) +
        '. Its outcome cannot be read. Start it again from its producer with the same idempotency key ' +
        '(a run some producer already started again is then not started twice), and give the store ' +
        'durable storage (docs/operations.md, "Redis lost its data")',
    );
  }
}

/** An operation needs the run in another state (a retry of a run that did not fail, say). */
export class RunStateError extends BatonError {
  constructor(
    readonly runId: string,
    readonly status: string,
    message: string,
  ) {
    super('BATON_RUN_STATE', message);
  }
}

/**
 * The refusal of a delete or purge of a run that is not finished (completed, failed or
 * cancelled): retention never removes anything of a run that may still continue.
 */
export function refuseDelete(runId: string, status: string): RunStateError {
  return new RunStateError(
    runId,
    status,
    `run ${runId} is ${status}: only a completed, failed or cancelled run can be deleted; ` +
      'cancel it and wait until it has finished first',
  );
}

/**
 * The run is gone: the retention sweep deleted it (its tombstone says when). Its outcome can no
 * longer be read; nothing waits for it. Raised by `client.result()` at once instead of waiting.
 */
export class RunDeletedError extends BatonError {
  constructor(
    readonly runId: string,
    /** When the sweep deleted it, on the store's clock (ms since the epoch). */
    readonly deletedAt: number,
  ) {
    super(
      'BATON_RUN_DELETED',
      `run ${runId} was deleted by the retention sweep at ${new Date(deletedAt).toISOString()} ` +
        "(finished runs older than the workers' BATON_RETENTION_MS are deleted), so its outcome is gone: " +
        'read outcomes sooner, or raise BATON_RETENTION_MS',
    );
  }
}

/** Waiting for something exceeded the caller's timeout. */
export class TimeoutError extends BatonError {
  constructor(message: string) {
    super('BATON_TIMEOUT', message, { retryable: true });
  }
}

/** The plain-data form of an error, as journaled and returned to clients. */
export interface SerializedError {
  name: string;
  message: string;
  code?: string;
  retryable?: boolean;
  stack?: string;
  cause?: SerializedError;
}

/** Turns anything thrown into plain data that survives JSON. */
export function serializeError(err: unknown, depth = 0): SerializedError {
  if (err instanceof Error) {
    const out: SerializedError = { name: err.name, message: err.message };
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string') out.code = code;
    const retryable = (err as { retryable?: unknown }).retryable;
    if (typeof retryable === 'boolean') out.retryable = retryable;
    if (err.stack) out.stack = err.stack;
    if (err.cause !== undefined && depth < 4) out.cause = serializeError(err.cause, depth + 1);
    return out;
  }
  return { name: 'NonError', message: typeof err === 'string' ? err : safeStringify(err) };
}

/** Rebuilds an Error from its serialized form (the class is not restored; name, code and cause are). */
export function deserializeError(data: SerializedError): Error {
  const err = new Error(data.message, data.cause ? { cause: deserializeError(data.cause) } : undefined);
  err.name = data.name;
  if (data.code !== undefined) (err as Error & { code?: string }).code = data.code;
  if (data.retryable !== undefined) (err as Error & { retryable?: boolean }).retryable = data.retryable;
  if (data.stack !== undefined) err.stack = data.stack;
  return err;
}

/** True when the error says retrying cannot help. */
export function isNonRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { retryable?: unknown }).retryable === false;
}

function describeCause(cause: unknown): string {
  return cause instanceof Error ? `${cause.name}: ${cause.message}` : safeStringify(cause);
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
