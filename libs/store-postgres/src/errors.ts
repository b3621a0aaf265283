/**
 * The Postgres store's side of the backend error categories (@baton/core/adapter): connectError
 * and operationError map what pg throws to one of them. Each names what went wrong, with which
 * server, schema or role, and what fixes it; none ever contains a password (URLs are shown
 * masked, and pg's own messages carry none). Every one keeps its stable code, its pg error as
 * cause, and the name the store's errors had as a class, `PostgresStoreError` (stored run records
 * and alerts carry it).
 */
import { BatonError, type BatonErrorOptions } from '@baton/core';
import {
  BackendAuthError,
  BackendConflictError,
  BackendNotDurableError,
  BackendPermissionError,
  BackendRequestError,
  BackendUnavailableError,
  type BackendError,
  CONNECTION_FAILURE_CODES,
} from '@baton/core/adapter';
import type { ResolvedPostgresStoreOptions } from './options.js';

/** Stable codes of the store's errors, each under the category {@link pgError} gives it. */
export const POSTGRES_ERROR_CODES = {
  /** Nothing answered at host:port within connectTimeoutMs (or the server refused). Retryable. */
  unreachable: 'BATON_PG_UNREACHABLE',
  /** The URL names a database the server does not have. */
  unknownDatabase: 'BATON_PG_UNKNOWN_DATABASE',
  /** The URL names a role the server does not have. */
  unknownRole: 'BATON_PG_UNKNOWN_ROLE',
  /** The server refused the credentials (or pg_hba.conf has no rule for this client). */
  authentication: 'BATON_PG_AUTH_FAILED',
  /** The role lacks a privilege the store needs (creating the schema, using its tables). */
  privileges: 'BATON_PG_PRIVILEGES',
  /** TLS could not be set up (server without TLS, certificate not trusted, wrong host name). */
  tls: 'BATON_PG_TLS',
  /** Another live connection holds the presence lock of this worker id. */
  presenceConflict: 'BATON_PG_PRESENCE_CONFLICT',
  /**
   * requireSynchronousStandby is set, but the server's commits would not wait for a synchronous
   * standby (or the URL leads to a standby).
   */
  notSynchronous: 'BATON_PG_NOT_SYNCHRONOUS',
  /** Any other failure to connect. */
  connect: 'BATON_PG_CONNECT',
  /** A store operation failed; `retryable` tells whether trying again may help. */
  query: 'BATON_PG_QUERY',
} as const;

type PostgresErrorKey = keyof typeof POSTGRES_ERROR_CODES;

/** The category of each code, by what the operator does next. */
const CATEGORIES = {
  unreachable: BackendUnavailableError,
  // Postgres refuses the login of a role that does not exist (28000) as it does a wrong password.
  unknownRole: BackendAuthError,
  authentication: BackendAuthError,
  privileges: BackendPermissionError,
  presenceConflict: BackendConflictError,
  notSynchronous: BackendNotDurableError,
  unknownDatabase: BackendRequestError,
  tls: BackendRequestError,
  connect: BackendRequestError,
  query: BackendRequestError,
} satisfies Record<PostgresErrorKey, new (message: string, options: never) => BackendError>;

/**
 * The store's error for `key`, in its category (a query that lost its connection is unavailable,
 * whatever its code), named as the store's errors always were.
 */
export function pgError(
  key: PostgresErrorKey,
  message: string,
  options: BatonErrorOptions & { name?: string; connectionLost?: boolean } = {},
): BackendError {
  const { name = 'PostgresStoreError', connectionLost = false, ...rest } = options;
  const category = connectionLost ? BackendUnavailableError : CATEGORIES[key];
  // The store's errors were retryable only when it said so; some categories default otherwise.
  const retryable = rest.retryable ?? false;
  return new category(message, {
    ...rest,
    retryable,
    backend: 'postgres',
    code: POSTGRES_ERROR_CODES[key],
    name,
  });
}

/** The parts of a pg (or socket) error this module reads. */
interface PgErrorLike {
  code?: unknown;
  message?: unknown;
}

function sqlState(err: unknown): string | undefined {
  const code = (err as PgErrorLike | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function messageOf(err: unknown): string {
  const message = (err as PgErrorLike | null)?.message;
  return typeof message === 'string' ? message : String(err);
}

/** True when the connection itself failed (as opposed to a statement). */
export function isConnectionFailure(err: unknown): boolean {
  const code = sqlState(err);
  if (
    code !== undefined &&
    (CONNECTION_FAILURE_CODES.has(code) || code.startsWith('08') || code === '57P01' || code === '57P03')
  ) {
    return true;
  }
  // pg's own (code-less) messages for a connection that timed out or went away. A statement
  // timeout (57014) is not one of them: the connection is fine.
  return /connection timeout|timeout expired|timeout exceeded when trying to connect|Connection terminated|Connection ended|not queryable/i.test(
    messageOf(err),
  );
}

/** Deadlocks and serialization failures abort the whole transaction: repeating it is safe. */
export function isTransactionConflict(err: unknown): boolean {
  const code = sqlState(err);
  return code === '40P01' || code === '40001';
}

/** Turns a failure to open a connection into an error naming the server and the fix. */
export function connectError(err: unknown, options: ResolvedPostgresStoreOptions): BatonError {
  if (err instanceof BatonError) return err;
  const code = sqlState(err);
  const detail = messageOf(err);
  const where = `postgres store at ${options.displayUrl}`;
  const make = (key: PostgresErrorKey, message: string, retryable = false) =>
    pgError(key, message, { cause: err, retryable });
  if (code === '3D000') {
    return make(
      'unknownDatabase',
      `${where}: ${detail}. Create it (CREATE DATABASE "${options.database}") or fix the database in the URL's path`,
    );
  }
  if (code === '28000' && /role .* does not exist/i.test(detail)) {
    return make(
      'unknownRole',
      `${where}: ${detail}. Create the role (CREATE ROLE "${options.user}" LOGIN PASSWORD '…') or fix the user in the URL`,
    );
  }
  if (code === '28P01' || code === '28000' || /password|SASL|SCRAM/i.test(detail)) {
    return make(
      'authentication',
      `${where}: authentication failed (${detail}). Check the user and password in the URL, ` +
        `and that pg_hba.conf allows this client`,
    );
  }
  if (/SSL|certificate|Hostname\/IP does not match/i.test(detail) || code?.startsWith('ERR_TLS') === true) {
    return make(
      'tls',
      `${where}: TLS failed: ${detail}. Match the ssl option (or the URL's sslmode) to the server: drop it for a ` +
        `server without TLS, or pass the server's CA as ssl: { ca } when its certificate is not publicly trusted`,
    );
  }
  if (code === '42501') {
    return make(
      'privileges',
      `${where}: ${detail}. Grant the role the privileges listed in the store's README`,
    );
  }
  if (isConnectionFailure(err)) {
    const problem =
      code !== undefined && CONNECTION_FAILURE_CODES.has(code)
        ? `cannot reach ${options.server} (${code})`
        : `no answer from ${options.server} within ${options.connectTimeoutMs} ms (${detail})`;
    return make(
      'unreachable',
      `${where}: ${problem}. Check that PostgreSQL is running there and that the URL's host and port are right`,
      true,
    );
  }
  return make(
    'connect',
    `${where}: cannot connect: ${detail}${code === undefined ? '' : ` (SQLSTATE ${code})`}`,
  );
}

/** Wraps a failed store operation, keeping BatonErrors (fencing, closed) as they are. */
export function operationError(
  operation: string,
  err: unknown,
  options: ResolvedPostgresStoreOptions,
): BatonError {
  if (err instanceof BatonError) return err;
  const code = sqlState(err);
  if (code === '42501') {
    return pgError(
      'privileges',
      `postgres store: ${operation} in schema "${options.schema}" was refused: ${messageOf(err)}. ` +
        `Run as an administrator: ${usageGrants(options.quotedSchema, "<the store's role>")}`,
      { cause: err },
    );
  }
  const connectionLost = isConnectionFailure(err);
  const retryable = connectionLost || isTransactionConflict(err) || code === '57014';
  return pgError(
    'query',
    `postgres store: ${operation} failed: ${messageOf(err)}${code === undefined ? '' : ` (SQLSTATE ${code})`}`,
    { cause: err, retryable, connectionLost },
  );
}

/** The statements that let `role` use a migrated schema (but not migrate it). */
export function usageGrants(quotedSchema: string, role: string): string {
  return (
    `GRANT USAGE ON SCHEMA ${quotedSchema} TO ${role}; ` +
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${quotedSchema} TO ${role}; ` +
    `GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${quotedSchema} TO ${role}`
  );
}
