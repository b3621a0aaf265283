/**
 * The Redis transport's side of the backend error categories (@baton/core/adapter):
 * toRedisTransportError maps what ioredis or BullMQ throws to one of them, and the functions below
 * make the ones the transport raises itself. Each keeps the code and the name the transport's own
 * error classes had (stored run records and alerts carry them) and what was thrown as `cause`.
 * Messages name the server by its masked URL.
 */
import { BatonError, type BatonErrorOptions } from '@baton/core';
import {
  BackendAuthError,
  BackendNotDurableError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
  BackendUnsupportedError,
  CONNECTION_FAILURE_CODES,
} from '@baton/core/adapter';

/**
 * Each condition's code and name, as the transport's classes had them. A refused login and a
 * refused command shared one class (and still share its code and name); their categories differ.
 */
const KINDS = {
  unavailable: { code: 'BATON_REDIS_TRANSPORT_UNAVAILABLE', name: 'RedisTransportUnavailableError' },
  auth: { code: 'BATON_REDIS_TRANSPORT_AUTH', name: 'RedisTransportAuthError' },
  version: { code: 'BATON_REDIS_TRANSPORT_VERSION', name: 'RedisTransportVersionError' },
  replication: { code: 'BATON_REDIS_TRANSPORT_NOT_REPLICATED', name: 'RedisTransportReplicationError' },
  command: { code: 'BATON_REDIS_TRANSPORT_COMMAND', name: 'RedisTransportCommandError' },
} as const;

function kind(key: keyof typeof KINDS, options?: BatonErrorOptions) {
  return { ...options, ...KINDS[key], backend: 'redis' };
}

/** Redis did not answer in time, refused the connection, or dropped it. Retryable. */
export function redisTransportUnavailable(
  message: string,
  options?: BatonErrorOptions,
): BackendUnavailableError {
  return new BackendUnavailableError(message, kind('unavailable', options));
}

/** The server is older than the transport needs (Redis 7: `XADD <ms>-*`, exclusive XRANGE). */
export function redisTooOld(version: string, message: string): BackendUnsupportedError {
  return new BackendUnsupportedError(message, { ...kind('version'), serverVersion: version });
}

/**
 * The primary applied a write but not enough replicas confirmed it in time (replication.ts): a
 * failover could lose it, so nothing goes on from it. Retryable.
 */
export function notReplicated(message: string, options?: BatonErrorOptions): BackendNotDurableError {
  return new BackendNotDurableError(message, kind('replication', options));
}

/** Redis answered with an error, or with a reply the transport cannot read. */
export function redisCommandFailed(message: string, options?: BatonErrorOptions): BackendRequestError {
  return new BackendRequestError(message, kind('command', options));
}

/** What a message says about where an error happened. */
export interface ErrorContext {
  /** The masked URL. */
  url: string;
  /** The transport operation, e.g. `append`. */
  operation: string;
}

/**
 * Turns anything thrown under an operation into the backend category for it (a BackendRequestError
 * when none fits); BatonErrors pass through.
 */
export function toRedisTransportError(err: unknown, context: ErrorContext): BatonError {
  if (err instanceof BatonError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const where = `redis transport: ${context.operation} on ${context.url}`;
  if (/WRONGPASS|NOAUTH|NOPERM/.test(message)) {
    const text = `${where} was refused: ${message}; check the user and password in the URL and the ACL user's permissions (docs/redis-only.md)`;
    if (!message.includes('NOPERM')) return new BackendAuthError(text, kind('auth', { cause: err }));
    const command = /permissions to run the '([^']+)' command/.exec(message)?.[1];
    return new BackendPermissionError(text, {
      ...kind('auth', { cause: err }),
      ...(command !== undefined && { resource: command }),
    });
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (
    (typeof code === 'string' && CONNECTION_FAILURE_CODES.has(code)) ||
    /Connection is closed|Stream isn't writeable|enableOfflineQueue|max retries per request|LOADING|READONLY|MASTERDOWN/i.test(
      message,
    )
  ) {
    return redisTransportUnavailable(`${where} failed: ${message}; it is retried once Redis answers`, {
      cause: err,
    });
  }
  return redisCommandFailed(`${where} failed: ${message}`, { cause: err });
}

/** The error of an operation that waited `ms` for the server without an answer. */
export function timedOut(context: ErrorContext, ms: number): BackendUnavailableError {
  return redisTransportUnavailable(
    `redis transport: ${context.operation} on ${context.url} got no answer within ${ms} ms (requestTimeoutMs); Redis is down or overloaded, and the operation may be retried`,
  );
}
