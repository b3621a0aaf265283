/**
 * Options of {@link postgresStore}, resolved once at creation into a complete
 * {@link ResolvedPostgresStoreOptions}: a typo fails when the store is built, never on the first
 * failover.
 */
import type { ConnectionOptions } from 'node:tls';
import { ConfigError } from '@baton/core';
import { maskUrlSecret } from '@baton/core/adapter';
import { quoteIdent } from './sql.js';

/** The server a store talks to when no `url` is given. */
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
/** The schema every table lives in when no `schema` is given. */
export const DEFAULT_SCHEMA = 'baton';

/** Options of {@link postgresStore}. */
export interface PostgresStoreOptions {
  /**
   * The server, as `postgres://user:password@host:5432/database` (or `postgresql://`). Query
   * parameters pg understands work too, e.g. `?sslmode=require`.
   * @defaultValue 'postgres://postgres@127.0.0.1:5432/test'
   */
  url?: string;
  /**
   * The schema every Baton table lives in; created on first connect if absent. Two stores with
   * different schemas on one database never see each other's runs. Letters, digits and `_`,
   * starting with a letter or `_`, at most 63 characters, not starting with `pg_`.
   * @defaultValue 'baton'
   */
  schema?: string;
  /**
   * TLS for every connection, as pg takes it: `true`, or node:tls options such as
   * `{ ca, rejectUnauthorized }`. When given, it replaces any ssl setting of the URL.
   * @defaultValue whatever the URL says (`?sslmode=…`), else no TLS
   */
  ssl?: boolean | ConnectionOptions;
  /**
   * Connections in the pool for store operations. Each registered worker holds one more,
   * outside the pool, for its presence lock.
   * @defaultValue 10
   */
  poolSize?: number;
  /**
   * How long opening a connection may take before connect() (or an operation needing a new
   * connection) fails, naming the server.
   * @defaultValue 5000
   */
  connectTimeoutMs?: number;
  /**
   * The server cancels any statement running longer than this (`statement_timeout`).
   * @defaultValue no limit
   */
  statementTimeoutMs?: number;
  /**
   * `synchronous_commit` for the store's sessions: how far a commit must have travelled before
   * the server acknowledges it. With a standby named in the primary's
   * `synchronous_standby_names`, `remote_write`, `on` and `remote_apply` make every acknowledged
   * lease, epoch, checkpoint and finish write survive a failover to that standby (docs/production.md,
   * "PostgreSQL"); `local` and `off` do not.
   * @defaultValue the server's setting
   */
  synchronousCommit?: SynchronousCommit;
  /**
   * Refuse to connect to a server whose commits do not wait for a synchronous standby
   * (`synchronous_commit` of `local` or `off` for the store's sessions, or an empty
   * `synchronous_standby_names`), so an asynchronous standby can never be promoted under a fleet
   * that was told its writes were replicated.
   * @defaultValue false
   */
  requireSynchronousStandby?: boolean;
  /**
   * Send each statement as a named prepared statement, parsed and planned once per connection
   * instead of on every call: about a fifth to a half of the server's CPU per call
   * (docs/performance.md). Turn it off behind a pooler in transaction mode that does not track
   * prepared statements (PgBouncer before 1.21, or without `max_prepared_statements`); the store
   * also stops preparing by itself the first time the server says a statement it prepared is gone.
   * @defaultValue true
   */
  preparedStatements?: boolean;
}

/** The values of PostgreSQL's `synchronous_commit`, weakest last. */
export const SYNCHRONOUS_COMMIT_LEVELS = ['remote_apply', 'on', 'remote_write', 'local', 'off'] as const;
export type SynchronousCommit = (typeof SYNCHRONOUS_COMMIT_LEVELS)[number];

/** {@link PostgresStoreOptions} with every default applied and every value checked. */
export interface ResolvedPostgresStoreOptions {
  url: string;
  /** The URL with its password masked, for messages. */
  displayUrl: string;
  /** `host:port`, for messages. */
  server: string;
  /** Database name from the URL (empty: the server's default, the user's name). */
  database: string;
  /** User from the URL (empty: pg's default). */
  user: string;
  schema: string;
  /** The schema quoted for SQL. */
  quotedSchema: string;
  ssl: boolean | ConnectionOptions | undefined;
  poolSize: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number | undefined;
  synchronousCommit: SynchronousCommit | undefined;
  requireSynchronousStandby: boolean;
  preparedStatements: boolean;
}

const EXPECTED_URL = 'postgres://user:password@host:5432/database';
/** Unquoted-identifier shape; 63 bytes is PostgreSQL's NAMEDATALEN - 1. */
const SCHEMA_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function resolvePostgresStoreOptions(
  options: PostgresStoreOptions = {},
): ResolvedPostgresStoreOptions {
  const url = options.url ?? DEFAULT_POSTGRES_URL;
  const parsed = parseUrl(url);
  const schema = resolveSchema(options.schema ?? DEFAULT_SCHEMA);
  if (options.ssl !== undefined && typeof options.ssl !== 'boolean' && typeof options.ssl !== 'object') {
    throw new ConfigError(
      `postgresStore: ssl must be true, false or node:tls options such as { ca, rejectUnauthorized }, got ${typeof options.ssl}`,
    );
  }
  const statementTimeoutMs =
    options.statementTimeoutMs === undefined
      ? undefined
      : positiveInt('statementTimeoutMs', options.statementTimeoutMs, 'milliseconds, e.g. 30000');
  const synchronousCommit = options.synchronousCommit;
  if (synchronousCommit !== undefined && !SYNCHRONOUS_COMMIT_LEVELS.includes(synchronousCommit)) {
    throw new ConfigError(
      `postgresStore: synchronousCommit must be one of ${SYNCHRONOUS_COMMIT_LEVELS.join(', ')}, got '${String(synchronousCommit)}'`,
    );
  }
  if (
    options.requireSynchronousStandby !== undefined &&
    typeof options.requireSynchronousStandby !== 'boolean'
  ) {
    throw new ConfigError(
      `postgresStore: requireSynchronousStandby must be true or false, got ${String(options.requireSynchronousStandby)}`,
    );
  }
  const requireSynchronousStandby = options.requireSynchronousStandby ?? false;
  if (options.preparedStatements !== undefined && typeof options.preparedStatements !== 'boolean') {
    throw new ConfigError(
      `postgresStore: preparedStatements must be true or false, got ${String(options.preparedStatements)}`,
    );
  }
  if (requireSynchronousStandby && (synchronousCommit === 'local' || synchronousCommit === 'off')) {
    throw new ConfigError(
      `postgresStore: requireSynchronousStandby asks for commits that wait for a standby, but synchronousCommit is '${synchronousCommit}', ` +
        `which never waits; use remote_write, on or remote_apply (or leave synchronousCommit unset)`,
    );
  }
  return {
    url,
    displayUrl: maskPassword(url),
    server: `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`,
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')),
    user: decodeURIComponent(parsed.username),
    schema,
    quotedSchema: quoteIdent(schema),
    ssl: options.ssl,
    poolSize: positiveInt('poolSize', options.poolSize ?? 10, 'connections, e.g. 10'),
    connectTimeoutMs: positiveInt(
      'connectTimeoutMs',
      options.connectTimeoutMs ?? 5_000,
      'milliseconds, e.g. 5000',
    ),
    statementTimeoutMs,
    synchronousCommit,
    requireSynchronousStandby,
    preparedStatements: options.preparedStatements ?? true,
  };
}

/** The URL with any password replaced by `***`; works on URLs that do not parse, too. */
export function maskPassword(url: string): string {
  return maskUrlSecret(url);
}

function parseUrl(url: string): URL {
  const fail = (problem: string): never => {
    throw new ConfigError(
      `postgresStore: url '${maskPassword(url)}' ${problem}; expected ${EXPECTED_URL} (or postgresql://…)`,
    );
  };
  if (typeof url !== 'string' || url.trim() === '') return fail('is empty');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail('is not a valid URL');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    return fail(`has the scheme '${parsed.protocol.replace(/:$/, '')}'`);
  }
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) return fail('names no host');
  return parsed;
}

function resolveSchema(schema: string): string {
  if (typeof schema !== 'string' || !SCHEMA_PATTERN.test(schema)) {
    throw new ConfigError(
      `postgresStore: schema '${String(schema)}' is not a usable schema name; use letters, digits and _, ` +
        `starting with a letter or _, at most 63 characters (e.g. 'baton' or 'baton_staging')`,
    );
  }
  if (schema.toLowerCase().startsWith('pg_')) {
    throw new ConfigError(
      `postgresStore: schema '${schema}' starts with pg_, which PostgreSQL reserves for system schemas; pick another name (e.g. 'baton')`,
    );
  }
  return schema;
}

function positiveInt(name: string, value: number, unit: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigError(
      `postgresStore: ${name} must be a positive integer of ${unit}, got ${String(value)}`,
    );
  }
  return value;
}
