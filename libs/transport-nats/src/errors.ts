/**
 * The NATS transport's side of the backend error categories (@baton/core/adapter): toNatsError
 * maps what nats.js throws to one of them, and the functions below make the ones the transport
 * raises itself. Each keeps the code and the name the transport's own error classes had (stored
 * run records and alerts carry them) and the nats.js error as `cause`. Messages name the servers
 * with secrets masked, what failed, and what to do about it.
 */
import { errors as natsErrors } from '@nats-io/transport-node';
import { JetStreamApiError } from '@nats-io/jetstream';
import { BatonError, type BatonErrorOptions } from '@baton/core';
import {
  BackendAuthError,
  BackendConflictError,
  BackendNotDurableError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
  BackendUnsupportedError,
  CONNECTION_FAILURE_CODES,
} from '@baton/core/adapter';

/** Each condition's code and name, as the transport's classes had them. */
const KINDS = {
  unavailable: { code: 'BATON_NATS_UNAVAILABLE', name: 'NatsUnavailableError' },
  auth: { code: 'BATON_NATS_AUTH', name: 'NatsAuthError' },
  permission: { code: 'BATON_NATS_PERMISSION', name: 'NatsPermissionError' },
  jetStreamDisabled: { code: 'BATON_NATS_JETSTREAM_DISABLED', name: 'NatsJetStreamDisabledError' },
  version: { code: 'BATON_NATS_VERSION', name: 'NatsServerVersionError' },
  streamConflict: { code: 'BATON_NATS_STREAM_CONFLICT', name: 'NatsStreamConflictError' },
  request: { code: 'BATON_NATS_REQUEST', name: 'NatsRequestError' },
} as const;

function kind(key: keyof typeof KINDS, options?: BatonErrorOptions) {
  return { ...options, ...KINDS[key], backend: 'nats' };
}

/** The server could not be reached, or did not answer in time. Retryable: the client reconnects. */
export function natsUnavailable(message: string, options?: BatonErrorOptions): BackendUnavailableError {
  return new BackendUnavailableError(message, kind('unavailable', options));
}

/** The server is older than the oldest version the transport supports. */
export function natsServerTooOld(version: string, message: string): BackendUnsupportedError {
  return new BackendUnsupportedError(message, { ...kind('version'), serverVersion: version });
}

/** A stream or consumer with the transport's name exists with a configuration it cannot use. */
export function natsStreamConflict(message: string, options?: BatonErrorOptions): BackendConflictError {
  return new BackendConflictError(message, kind('streamConflict', options));
}

/**
 * The servers cannot hold the stream's replicas (a single server, a cluster too small or full).
 * Not retryable: the cluster or the replicas option must change.
 */
export function natsReplicasRefused(message: string, options?: BatonErrorOptions): BackendNotDurableError {
  return new BackendNotDurableError(message, { ...kind('streamConflict', options), retryable: false });
}

/** A JetStream request failed for another reason; the message carries the server's words. */
export function natsRequestFailed(message: string, options?: BatonErrorOptions): BackendRequestError {
  return new BackendRequestError(message, kind('request', options));
}

/** What the transport's messages say about where an error happened. */
export interface ErrorContext {
  /** The servers, masked. */
  servers: string;
  /** The transport operation, e.g. `connect`, `enqueue`. */
  operation: string;
}

const LOOKUP_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN']);

/** JetStream API error code: JetStream is not enabled for the account. */
const JS_NOT_ENABLED_FOR_ACCOUNT = 10039;
/**
 * JetStream API error codes of a cluster between leaders (a stream or the meta layer has none
 * right now): "JetStream system temporarily unavailable" (10008), "not leader" (10009). They pass
 * once a leader is elected, so they are unavailability, not a refusal.
 */
const LEADERLESS_CODES: ReadonlySet<number> = new Set([10008, 10009]);

/**
 * Turns anything nats.js throws into the backend error category for that condition (a
 * BackendRequestError when none fits). BatonErrors pass through unchanged (a JournalConflictError
 * stays one).
 */
export function toNatsError(err: unknown, context: ErrorContext): BatonError {
  if (err instanceof BatonError) return err;
  const where = `nats transport ${context.operation} at ${context.servers}`;
  const permission = findCause(err, natsErrors.PermissionViolationError);
  if (permission !== undefined) {
    const verb = permission.operation === 'publish' ? 'publish to' : 'subscribe to';
    return new BackendPermissionError(
      `${where}: the server refused permission to ${verb} '${permission.subject}'; grant it to the ` +
        "transport's user (the transport-nats README lists the subjects a worker and a producer need)",
      { ...kind('permission', { cause: err }), resource: permission.subject, action: permission.operation },
    );
  }
  if (
    findCause(err, natsErrors.AuthorizationError) ||
    findCause(err, natsErrors.UserAuthenticationExpiredError)
  ) {
    return new BackendAuthError(
      `${where}: the server refused the credentials (${describe(err)}); check the user/password, token, ` +
        'creds or NKey seed given to the transport (or in the server URL)',
      kind('auth', { cause: err }),
    );
  }
  const apiError = findCause(err, JetStreamApiError);
  if (
    context.operation !== 'connect' &&
    hasCauseNamed(err, 'JetStreamNotEnabled') &&
    findCause(err, natsErrors.NoRespondersError) !== undefined
  ) {
    // JetStream answered at connect, where the streams were made: nothing answering a publish
    // now is a stream without a leader (a cluster's election), or a stream deleted since.
    return natsUnavailable(
      `${where} failed: no JetStream stream answered (${describe(err)}); in a cluster the stream has no ` +
        'leader for the moment (an election takes seconds), retry the operation; if it lasts, check that the ' +
        "transport's streams still exist (a worker creates them when it starts)",
      { cause: err },
    );
  }
  if (
    hasCauseNamed(err, 'JetStreamNotEnabled') ||
    (apiError !== undefined && apiError.code === JS_NOT_ENABLED_FOR_ACCOUNT)
  ) {
    return new BackendUnsupportedError(
      `${where}: JetStream is not enabled (${describe(err)}); start nats-server with -js (or a jetstream {} ` +
        "block in its configuration) and enable it for the user's account",
      kind('jetStreamDisabled', { cause: err }),
    );
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && LOOKUP_CODES.has(code)) {
    return natsUnavailable(
      `${where}: the host name does not resolve (${describe(err)}); check the server URL`,
      { cause: err },
    );
  }
  if (apiError !== undefined && LEADERLESS_CODES.has(apiError.code)) {
    return natsUnavailable(
      `${where} failed: the JetStream cluster has no leader for it right now (${describe(err)}); ` +
        'it elects one within seconds while a majority of its servers is up, retry the operation',
      { cause: err },
    );
  }
  if (
    (typeof code === 'string' && CONNECTION_FAILURE_CODES.has(code)) ||
    findCause(err, natsErrors.ConnectionError) ||
    findCause(err, natsErrors.TimeoutError) ||
    findCause(err, natsErrors.ClosedConnectionError) ||
    findCause(err, natsErrors.DrainingConnectionError)
  ) {
    return natsUnavailable(
      `${where} failed: NATS did not answer (${describe(err)}); the connection reconnects by itself, ` +
        'retry the operation',
      { cause: err },
    );
  }
  return natsRequestFailed(`${where} failed: ${describe(err)}`, { cause: err });
}

/**
 * True when `err` (a nats.js error or a transport error caused by one) is a JetStream cluster
 * between leaders, which passes once one is elected.
 */
/**
 * JetStream API error codes of a stream a cluster cannot place right now: "no suitable peers for
 * placement" (10005), "insufficient resources" (10023). Right after nodes restart, the meta
 * leader may not count a node that is back (or one still down) among the peers, so a stream
 * created then is refused for a moment; a cluster too small for the replicas asked is refused
 * the same way for good.
 */
const PLACEMENT_CODES: ReadonlySet<number> = new Set([10005, 10023]);

/** Whether `err` (or its causes) is a cluster's refusal to place a stream (PLACEMENT_CODES). */
export function isPlacementRefusal(err: unknown): boolean {
  const apiError = findCause(err, JetStreamApiError);
  return apiError !== undefined && PLACEMENT_CODES.has(apiError.code);
}

export function isLeaderless(err: unknown): boolean {
  const apiError = findCause(err, JetStreamApiError);
  return apiError !== undefined && LEADERLESS_CODES.has(apiError.code);
}

/** The first error in the `cause` chain that is an instance of `type`. */
export function findCause<T extends Error>(
  err: unknown,
  type: abstract new (...args: never[]) => T,
): T | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof type) return current;
    current = current.cause;
  }
  return undefined;
}

/** True when an error in the `cause` chain has that name (for classes nats.js does not export). */
export function hasCauseNamed(err: unknown, name: string): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current.name === name) return true;
    current = current.cause;
  }
  return false;
}

/** The error's message with the causes nats.js wraps, on one line. */
export function describe(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 3 && current !== undefined; depth++) {
    const message = current instanceof Error ? current.message : String(current);
    if (message !== '' && !parts.includes(message)) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ').replace(/\s+/g, ' ') || 'unknown error';
}
