/**
 * Errors of the Redis store: one class per condition, each a BatonError with a stable code and
 * the ioredis error as `cause`. Messages name the server by its masked URL, never a password.
 */
import { BatonError, type BatonErrorOptions } from '@baton/core';
import { CONNECTION_FAILURE_CODES } from '@baton/core/adapter';

/** Redis did not answer: refused, timed out, connection dropped. Retryable. */
export class RedisUnavailableError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_REDIS_UNAVAILABLE', message, { retryable: true, ...options });
  }
}

/** Redis refused the credentials (WRONGPASS) or wants some (NOAUTH). Not retryable. */
export class RedisAuthError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_REDIS_AUTH', message, { ...options, retryable: false });
  }
}

/** The ACL user may not run a command the store needs (NOPERM). Not retryable. */
export class RedisPermissionError extends BatonError {
  constructor(
    /** The refused command (e.g. `evalsha`, `client|list`), or undefined when Redis did not say. */
    readonly command: string | undefined,
    message: string,
    options?: BatonErrorOptions,
  ) {
    super('BATON_REDIS_PERMISSION', message, { ...options, retryable: false });
  }
}

/** Redis answered with an error or a reply the store cannot read. */
export class RedisCommandError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_REDIS_COMMAND', message, options);
  }
}

/** What the store's messages say about the server. */
export interface ErrorContext {
  /** The masked URL. */
  url: string;
  /** The store operation, e.g. `acquireLease`. */
  operation: string;
}

/** The refused command in a NOPERM reply, e.g. `client|list`. */
export function refusedCommand(message: string): string | undefined {
  return /permissions to run the '([^']+)' command/.exec(message)?.[1];
}

/**
 * Turns anything ioredis throws into the store's error for that condition. BatonErrors pass
 * through, so a FencedWriteError stays a FencedWriteError.
 */
export function toStoreError(err: unknown, context: ErrorContext): BatonError {
  if (err instanceof BatonError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  const where = `redis store ${context.operation} at ${context.url}`;
  if (/WRONGPASS|NOAUTH|invalid password/i.test(message)) {
    return new RedisAuthError(
      `${where}: the server refused the credentials (${firstLine(message)}); ` +
        'check the user and password in the store URL (or the username/password options)',
      { cause: err },
    );
  }
  if (message.includes('NOPERM')) {
    const command = refusedCommand(message);
    return new RedisPermissionError(
      command,
      `${where}: the Redis user may not run '${command ?? 'a command'}'; ` +
        `grant it (ACL SETUSER <user> +${command ?? '<command>'}); the README lists every command the store needs`,
      { cause: err },
    );
  }
  if (message.includes("user executing the script can't run this command")) {
    return new RedisPermissionError(
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
    return new RedisUnavailableError(
      `${where} failed: Redis is not reachable right now (${firstLine(message)}); ` +
        'the store reconnects by itself, retry the operation',
      { cause: err },
    );
  }
  return new RedisCommandError(`${where} failed: ${firstLine(message)}`, { cause: err });
}

function firstLine(message: string): string {
  return (message.split('\n', 1)[0] ?? message).replace(/\.$/, '');
}

/**
 * The primary applied a write but fewer replicas than required confirmed it in time (WAIT). The
 * write may still be lost if the primary fails now, so the store does not report it done.
 * Retryable: the run's lease expires and another claim (or this one, once a replica is back)
 * picks it up; nothing was acted on under the unconfirmed write.
 */
export class RedisReplicationError extends BatonError {
  constructor(message: string, options?: BatonErrorOptions) {
    super('BATON_REDIS_NOT_REPLICATED', message, { retryable: true, ...options });
  }
}
