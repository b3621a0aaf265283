/**
 * How a transport or store reports its server failing it: one class per category, named for what
 * the caller does next, whichever backend it is. An adapter maps its client library's errors to
 * these at its boundary (its errors.ts), so code above it catches `BackendUnavailableError`, never
 * a NATS or Redis class, and reads `backend` and `code` when it cares which server said so.
 *
 * Categories and their `retryable` default:
 * - {@link BackendUnavailableError}: the server is unreachable or the connection was lost (true).
 * - {@link BackendAuthError}: the server refused the login (always false).
 * - {@link BackendPermissionError}: an ACL refused an operation (always false).
 * - {@link BackendUnsupportedError}: the server cannot do what the adapter needs: too old, a
 *   feature disabled, the wrong kind of server (always false).
 * - {@link BackendNotDurableError}: the server would not keep the data as required (replicas,
 *   synchronous standbys) (true: replicas come back; a set-up refusal says false).
 * - {@link BackendConflictError}: something the adapter would create exists with settings it
 *   cannot use (false).
 * - {@link BackendRequestError}: any other failed request (false unless the adapter says).
 *
 * Codes stay each adapter's own (`BATON_NATS_UNAVAILABLE`, `BATON_PG_QUERY`): they are matched on
 * and stored. So do names: `name` is what a serialized error (a run record's `error`, a log line)
 * carries, and an adapter passes the name its error had before these categories existed
 * (`NatsUnavailableError`), so records and alerts written since read the same.
 */
import { BatonError, type BatonErrorOptions } from '../shared/errors.js';

export interface BackendErrorOptions extends BatonErrorOptions {
  /** Which kind of server failed: `nats`, `kafka`, `redis`, `postgres`. */
  backend: string;
  /** The adapter's stable code, e.g. `BATON_NATS_UNAVAILABLE`. */
  code: string;
  /**
   * The error's `name`, when it must differ from the class's: adapters keep the names their errors
   * had as classes of their own (serialized records and alerts carry them).
   */
  name?: string;
}

/** A backend failed an operation; the category is the subclass, the server `backend`. */
export abstract class BackendError extends BatonError {
  /** Which kind of server failed: `nats`, `kafka`, `redis`, `postgres`. */
  readonly backend: string;

  protected constructor(message: string, options: BackendErrorOptions, retryable: boolean) {
    const { backend, code, name, ...rest } = options;
    super(code, message, { ...rest, retryable });
    this.backend = backend;
    if (name !== undefined) this.name = name;
  }
}

/** The server could not be reached, did not answer in time, or dropped the connection. Retryable by default. */
export class BackendUnavailableError extends BackendError {
  constructor(message: string, options: BackendErrorOptions) {
    super(message, options, options.retryable ?? true);
  }
}

/** The server refused the login: wrong or expired credentials, an unknown user. Never retryable. */
export class BackendAuthError extends BackendError {
  constructor(message: string, options: BackendErrorOptions) {
    super(message, options, false);
  }
}

/** An ACL refused an operation the adapter needs. Never retryable: someone must grant it. */
export class BackendPermissionError extends BackendError {
  /** What was refused, in the backend's terms (a NATS subject, a Redis command), when it said. */
  readonly resource: string | undefined;
  /** What was tried on it (`publish`, `subscription`), when the backend tells. */
  readonly action: string | undefined;

  constructor(message: string, options: BackendErrorOptions & { resource?: string; action?: string }) {
    const { resource, action, ...rest } = options;
    super(message, rest, false);
    this.resource = resource;
    this.action = action;
  }
}

/**
 * The server cannot do what the adapter needs: a version too old, a feature disabled (JetStream
 * off), the wrong kind of server. Never retryable: the server must change.
 */
export class BackendUnsupportedError extends BackendError {
  /** The server's version, when that is what is refused. */
  readonly serverVersion: string | undefined;

  constructor(message: string, options: BackendErrorOptions & { serverVersion?: string }) {
    const { serverVersion, ...rest } = options;
    super(message, rest, false);
    this.serverVersion = serverVersion;
  }
}

/**
 * The server would not keep the data as required: fewer replicas confirmed a write than asked, a
 * stream's replicas cannot be placed, commits do not wait for a synchronous standby. Nothing goes
 * on from such a write. Retryable by default (replicas come back); a refusal at set-up is not.
 */
export class BackendNotDurableError extends BackendError {
  constructor(message: string, options: BackendErrorOptions) {
    super(message, options, options.retryable ?? true);
  }
}

/**
 * Something the adapter would create or hold exists already in a form it cannot use: a topic,
 * stream or consumer with other settings, a lock held by another live session. Not retryable
 * unless the adapter says the holder may go away.
 */
export class BackendConflictError extends BackendError {
  constructor(message: string, options: BackendErrorOptions) {
    super(message, options, options.retryable ?? false);
  }
}

/**
 * A request failed for a reason of no other category; the message carries the server's words.
 * Retryable when the adapter says so (a deadlock, a retriable broker answer).
 */
export class BackendRequestError extends BackendError {
  constructor(message: string, options: BackendErrorOptions) {
    super(message, options, options.retryable ?? false);
  }
}
