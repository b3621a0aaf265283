/**
 * Options of {@link postgresStore}, resolved once at creation into a complete
 * {@link ResolvedPostgresStoreOptions}: a typo fails when the store is built, never on the first
 * failover.
 */
import type { ConnectionOptions } from 'node:tls';
import { type ConfigError } from '@baton/core';
import { maskUrlSecret, invalidOption, type ConfigErrorFields } from '@baton/core/adapter';
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
/** What the store's ConfigErrors name as their component. */
const COMPONENT = 'postgresStore';

/** The ConfigError for one option: `postgresStore: <message>`, with the option's fields. */
function refuse(
  fields: Omit<ConfigErrorFields, 'component'> & { option: string; value: string; expected: string },
  message: string,
): ConfigError {
  return invalidOption({ component: COMPONENT, ...fields }, message);
}
/** Unquoted-identifier shape; 63 bytes is PostgreSQL's NAMEDATALEN - 1. */
const SCHEMA_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function resolvePostgresStoreOptions(
  options: PostgresStoreOptions = {},
): ResolvedPostgresStoreOptions {
  const url = options.url ?? DEFAULT_POSTGRES_URL;
  const parsed = parseUrl(url);
  const schema = resolveSchema(options.schema ?? DEFAULT_SCHEMA);
  if (options.ssl !== undefined && typeof options.ssl !== 'boolean' && typeof options.ssl !== 'object') {
    const expected = 'true, false or node:tls options such as { ca, rejectUnauthorized }';
    throw refuse(
      { option: 'ssl', value: typeof options.ssl, expected: `it must be ${expected}` },
      `ssl must be ${expected}, got ${typeof options.ssl}`,
    );
  }
  const statementTimeoutMs =
    options.statementTimeoutMs === undefined
      ? undefined
      : positiveInt('statementTimeoutMs', options.statementTimeoutMs, 'milliseconds, e.g. 30000');
  const synchronousCommit = options.synchronousCommit;
  if (synchronousCommit !== undefined && !SYNCHRONOUS_COMMIT_LEVELS.includes(synchronousCommit)) {
    const expected = `must be one of ${SYNCHRONOUS_COMMIT_LEVELS.join(', ')}`;
    throw refuse(
      { option: 'synchronousCommit', value: String(synchronousCommit), expected: `it ${expected}` },
      `synchronousCommit ${expected}, got '${String(synchronousCommit)}'`,
    );
  }
  if (
    options.requireSynchronousStandby !== undefined &&
    typeof options.requireSynchronousStandby !== 'boolean'
  ) {
    const shown = String(options.requireSynchronousStandby);
    throw refuse(
      { option: 'requireSynchronousStandby', value: shown, expected: 'it must be true or false' },
      `requireSynchronousStandby must be true or false, got ${shown}`,
    );
  }
  const requireSynchronousStandby = options.requireSynchronousStandby ?? false;
  if (options.preparedStatements !== undefined && typeof options.preparedStatements !== 'boolean') {
    const shown = String(options.preparedStatements);
    throw refuse(
      { option: 'preparedStatements', value: shown, expected: 'it must be true or false' },
      `preparedStatements must be true or false, got ${shown}`,
    );
  }
  if (requireSynchronousStandby && (synchronousCommit === 'local' || synchronousCommit === 'off')) {
    const fix = 'use remote_write, on or remote_apply (or leave synchronousCommit unset)';
    throw refuse(
      {
        option: 'synchronousCommit',
        value: synchronousCommit,
        expected: `it never waits for a standby, which requireSynchronousStandby asks for; ${fix}`,
        related: ['requireSynchronousStandby'],
      },
      `requireSynchronousStandby asks for commits that wait for a standby, but synchronousCommit is '${synchronousCommit}', ` +
        `which never waits; ${fix}`,
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
    const shown = typeof url === 'string' ? maskPassword(url) : typeof url;
    const expected = `${problem}; expected ${EXPECTED_URL} (or postgresql://…)`;
    throw refuse({ option: 'url', value: shown, expected: `it ${expected}` }, `url '${shown}' ${expected}`);
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
    const expected =
      "use letters, digits and _, starting with a letter or _, at most 63 characters (e.g. 'baton' or 'baton_staging')";
    throw refuse(
      { option: 'schema', value: String(schema), expected: `it is not a usable schema name; ${expected}` },
      `schema '${String(schema)}' is not a usable schema name; ${expected}`,
    );
  }
  if (schema.toLowerCase().startsWith('pg_')) {
    const expected =
      "starts with pg_, which PostgreSQL reserves for system schemas; pick another name (e.g. 'baton')";
    throw refuse(
      { option: 'schema', value: schema, expected: `it ${expected}` },
      `schema '${schema}' ${expected}`,
    );
  }
  return schema;
}

function positiveInt(name: string, value: number, unit: string): number {
  if (!Number.isInteger(value) || value < 1) {
    const expected = `must be a positive integer of ${unit}`;
    throw refuse(
      { option: name, value: String(value), expected: `it ${expected}` },
      `${name} ${expected}, got ${String(value)}`,
    );
  }
  return value;
}
