/**
 * Typed errors. One class per condition, named for what happens next. Every error has a stable
 * `code`, a `retryable` flag (may an activity retry loop try again?) and keeps its `cause`.
 *
 * This file holds what every door builds on: the base class, ConfigError, NotFoundError and
 * RunStateError (raised by stores and the client alike) and the serialized form. The errors of
 * each audience sit in its folder: author/errors.ts, adapter/errors.ts, runtime/errors.ts.
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

/** A named run, workflow or version does not exist. */
export class NotFoundError extends BatonError {
  constructor(message: string) {
    super('BATON_NOT_FOUND', message);
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

/** JSON for a message, or String() when the value has none (a BigInt, a cycle). */
export function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
