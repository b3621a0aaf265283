/**
 * The Redis store's side of the backend error categories (@baton/core/adapter): toStoreError maps
 * what ioredis throws to one of them, and the functions below make the ones the store raises
 * itself. Each keeps the code and the name the store's own error classes had (stored run records
 * and alerts carry them) and the ioredis error as `cause`. Messages name the server by its masked
 * URL, never a password.
 */
import { BatonError, type BatonErrorOptions } from '@baton/core';
import {
  BackendAuthError,
  BackendNotDurableError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
  CONNECTION_FAILURE_CODES,
} from '@baton/core/adapter';

/** Each condition's code and name, as the store's classes had them. */
const KINDS = {
  unavailable: { code: 'BATON_REDIS_UNAVAILABLE', name: 'RedisUnavailableError' },
  auth: { code: 'BATON_REDIS_AUTH', name: 'RedisAuthError' },
  permission: { code: 'BATON_REDIS_PERMISSION', name: 'RedisPermissionError' },
  command: { code: 'BATON_REDIS_COMMAND', name: 'RedisCommandError' },
  replication: { code: 'BATON_REDIS_NOT_REPLICATED', name: 'RedisReplicationError' },
} as const;

function kind(key: keyof typeof KINDS, options?: BatonErrorOptions) {
  return { ...options, ...KINDS[key], backend: 'redis' };
}

/** Redis did not answer: refused, timed out, connection dropped. Retryable. */
export function redisUnavailable(message: string, options?: BatonErrorOptions): BackendUnavailableError {
  return new BackendUnavailableError(message, kind('unavailable', options));
}

/** Redis refused the credentials (WRONGPASS) or wants some (NOAUTH). */
export function redisLoginRefused(message: string, options?: BatonErrorOptions): BackendAuthError {
  return new BackendAuthError(message, kind('auth', options));
}

/**
 * The ACL user may not run a command the store needs (NOPERM). `command` is the refused command
 * (e.g. `evalsha`, `client|list`), or undefined when Redis did not say.
 */
export function redisCommandRefused(
  command: string | undefined,
  message: string,
  options?: BatonErrorOptions,
): BackendPermissionError {
  return new BackendPermissionError(message, {
    ...kind('permission', options),
    ...(command !== undefined && { resource: command }),
  });
}

/** Redis answered with an error or a reply the store cannot read. */
export function redisCommandFailed(message: string, options?: BatonErrorOptions): BackendRequestError {
  return new BackendRequestError(message, kind('command', options));
}

/**
 * The primary applied a write but fewer replicas than required confirmed it in time (WAIT). The
 * write may still be lost if the primary fails now, so the store does not report it done.
 * Retryable: the run's lease expires and another claim (or this one, once a replica is back)
 * picks it up; nothing was acted on under the unconfirmed write.
 */
export function notReplicated(message: string, options?: BatonErrorOptions): BackendNotDurableError {
  return new BackendNotDurableError(message, kind('replication', options));
}

/** What the store's messages say about the server. */
export interface ErrorContext {
  /** The masked URL. */
  url: string;
  /** The store operation, e.g. `leases.acquire`. */
  operation: string;
}

/** The refused command in a NOPERM reply, e.g. `client|list`. */
export function refusedCommand(message: string): string | undefined {
  return /permissions to run the '([^']+)' command/.exec(message)?.[1];
}

/**
 * Turns anything ioredis throws into the backend category for that condition (a
 * BackendRequestError when none fits). BatonErrors pass through, so a FencedWriteError stays a
 * FencedWriteError.
 */
export function toStoreError(err: unknown, context: ErrorContext): BatonError {
  if (err instanceof BatonError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  const where = `redis store ${context.operation} at ${context.url}`;
  if (/WRONGPASS|NOAUTH|invalid password/i.test(message)) {
    return redisLoginRefused(
      `${where}: the server refused the credentials (${firstLine(message)}); ` +
        'check the user and password in the store URL (or the username/password options)',
      { cause: err },
    );
  }
  if (message.includes('NOPERM')) {
    const command = refusedCommand(message);
    return redisCommandRefused(
      command,
      `${where}: the Redis user may not run '${command ?? 'a command'}'; ` +
        `grant it (ACL SETUSER <user> +${command ?? '<command>'}); the README lists every command the store needs`,
      { cause: err },
    );
  }
  if (message.includes("user executing the script can't run this command")) {
    return redisCommandRefused(
      undefined,
      `${where}: a store script ran a command the Redis user may not run; ` +
        'grant the data commands the README lists (hashes, sets, sorted sets, lists, strings, TIME)',
      { cause: err },
    );
  }
  if (
    (typeof code === 'string' && CONNECTION_FAILURE_CODES.has(code)) ||
    /Connection is closed|max retries per request|Stream isn't writeable|LOADING|Command aborted/i.test(
      message,
    )
  ) {
    return redisUnavailable(
      `${where} failed: Redis is not reachable right now (${firstLine(message)}); ` +
        'the store reconnects by itself, retry the operation',
      { cause: err },
    );
  }
  return redisCommandFailed(`${where} failed: ${firstLine(message)}`, { cause: err });
}

function firstLine(message: string): string {
  return (message.split('\n', 1)[0] ?? message).replace(/\.$/, '');
}
