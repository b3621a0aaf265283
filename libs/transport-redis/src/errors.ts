/**
 * Errors of the Redis transport: one class per condition, each a BatonError with a stable code and
 * what ioredis or BullMQ threw as `cause`. Messages name the server by its masked URL.
 */
import { BatonError, type BatonErrorOptions } from '@baton/core';
import { CONNECTION_FAILURE_CODES } from '@baton/core/adapter';

/** Redis did not answer in time, refused the connection, or dropped it. Retryable. */
export class RedisTransportUnavailableError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_REDIS_TRANSPORT_UNAVAILABLE', message, { retryable: true, ...options });
  }
}

/** Redis refused the credentials, or the ACL user may not run a command the transport needs. */
export class RedisTransportAuthError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_REDIS_TRANSPORT_AUTH', message, { ...options, retryable: false });
  }
}

/** The server is older than the transport needs (Redis 7: `XADD <ms>-*`, exclusive XRANGE). */
export class RedisTransportVersionError extends BatonError {
  constructor(message: string) {
    super('BATON_REDIS_TRANSPORT_VERSION', message, { retryable: false });
  }
}

/**
 * The primary applied a write but not enough replicas confirmed it in time (replication.ts): a
 * failover could lose it, so nothing goes on from it. Retryable.
 */
export class RedisTransportReplicationError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_REDIS_TRANSPORT_NOT_REPLICATED', message, { retryable: true, ...options });
  }
}

/** Redis answered with an error, or with a reply the transport cannot read. */
export class RedisTransportCommandError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_REDIS_TRANSPORT_COMMAND', message, options);
  }
}

/** What a message says about where an error happened. */
export interface ErrorContext {
  /** The masked URL. */
  url: string;
  /** The transport operation, e.g. `append`. */
  operation: string;
}

/** Turns anything thrown under an operation into the transport's error; BatonErrors pass through. */
export function toRedisTransportError(err: unknown, context: ErrorContext): BatonError {
  if (err instanceof BatonError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const where = `redis transport: ${context.operation} on ${context.url}`;
  if (/WRONGPASS|NOAUTH|NOPERM/.test(message)) {
    return new RedisTransportAuthError(
      `${where} was refused: ${message}; check the user and password in the URL and the ACL user's permissions (docs/redis-only.md)`,
      { cause: err },
    );
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (
    (typeof code === 'string' && CONNECTION_FAILURE_CODES.has(code)) ||
    /Connection is closed|Stream isn't writeable|enableOfflineQueue|max retries per request|LOADING|READONLY|MASTERDOWN/i.test(
      message,
    )
  ) {
    return new RedisTransportUnavailableError(
      `${where} failed: ${message}; it is retried once Redis answers`,
      {
        cause: err,
      },
    );
  }
  return new RedisTransportCommandError(`${where} failed: ${message}`, { cause: err });
}

/** The error of an operation that waited `ms` for the server without an answer. */
export function timedOut(context: ErrorContext, ms: number): RedisTransportUnavailableError {
  return new RedisTransportUnavailableError(
    `redis transport: ${context.operation} on ${context.url} got no answer within ${ms} ms (requestTimeoutMs); Redis is down or overloaded, and the operation may be retried`,
  );
}
