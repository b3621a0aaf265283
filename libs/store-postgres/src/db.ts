/**
 * The pool every store operation goes through: renders `{{schema}}` once per statement text,
 * parses bigint columns (ms timestamps, epochs) as numbers, repeats a statement the server
 * aborted for a deadlock, and never lets an idle connection's error crash the process.
 */
import pg from 'pg';
import type { ClientConfig, PoolConfig, QueryResultRow } from 'pg';
import { CodecError } from '@baton/core';
import { isTransactionConflict } from './errors.js';
import type { ResolvedPostgresStoreOptions } from './options.js';
import { inSchema } from './sql.js';

/** Prefix of the application_name of pool connections (`baton-store:<schema>`). */
export const STORE_APPLICATION_PREFIX = 'baton-store:';

const INT8_OID = 20;
/** How often a statement aborted by a deadlock or serialization failure is tried in all. */
const CONFLICT_ATTEMPTS = 3;

/**
 * bigint columns hold ms timestamps and epochs, far below 2^53; pg returns them as strings by
 * default. Set per client (not on pg's global registry) so other pg users in the process are
 * not affected.
 */
const types: ClientConfig['types'] = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format ?? 'text')) as NonNullable<ClientConfig['types']>['getTypeParser'],
};

/** Connection settings shared by the pool and presence clients. */
export function clientConfig(options: ResolvedPostgresStoreOptions, applicationName: string): ClientConfig {
  // pg lets the URL's parameters override the config. The store names its own sessions (so an
  // operator can tell pool, presence and worker apart), and an explicit ssl option wins.
  const url = new URL(options.url);
  const overridden = options.ssl === undefined ? [] : ['ssl', 'sslmode', 'sslcert', 'sslkey', 'sslrootcert'];
  const dropped = ['application_name', ...overridden].filter((key) => url.searchParams.has(key));
  for (const key of dropped) url.searchParams.delete(key);
  const connectionString = dropped.length === 0 ? options.url : url.toString();
  return {
    connectionString,
    ...(options.ssl !== undefined && { ssl: options.ssl }),
    application_name: applicationName,
    connectionTimeoutMillis: options.connectTimeoutMs,
    ...(options.statementTimeoutMs !== undefined && { statement_timeout: options.statementTimeoutMs }),
    // A startup parameter, so it holds from the session's first statement on.
    ...(options.synchronousCommit !== undefined && {
      options: `-c synchronous_commit=${options.synchronousCommit}`,
    }),
    keepAlive: true,
    types,
  };
}

/** The store's pool with schema rendering and deadlock retries. */
export class Db {
  readonly pool: pg.Pool;
  private readonly rendered = new Map<string, string>();

  constructor(private readonly options: ResolvedPostgresStoreOptions) {
    // The schema in application_name tells an operator which store a connection belongs to.
    const config: PoolConfig = {
      ...clientConfig(options, `${STORE_APPLICATION_PREFIX}${options.schema}`),
      max: options.poolSize,
    };
    this.pool = new pg.Pool(config);
    // An idle connection that dies (server restart, network) emits here; without a listener
    // Node would crash the process. The pool drops it and opens a new one on next use.
    this.pool.on('error', () => undefined);
  }

  /** Runs one statement (one round trip) and returns its rows. */
  async query<R extends QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    const sql = this.render(text);
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.pool.query<R>(sql, values)).rows;
      } catch (err) {
        // Each statement is its own transaction, so an aborted one changed nothing.
        if (attempt < CONFLICT_ATTEMPTS && isTransactionConflict(err)) continue;
        throw err;
      }
    }
  }

  private render(text: string): string {
    let sql = this.rendered.get(text);
    if (sql === undefined) {
      sql = inSchema(text, this.options.quotedSchema);
      this.rendered.set(text, sql);
    }
    return sql;
  }

  async end(): Promise<void> {
    await this.pool.end();
  }
}

/** JSON text of a value for a `json` parameter; undefined becomes SQL NULL. */
export function toJson(value: unknown, what: string): string | null {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new CodecError(`postgres store: ${what} cannot be stored as JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return text === undefined ? null : text;
}

/** A value read back from a `json` column selected as text; SQL NULL becomes undefined. */
export function fromJson(text: string | null): unknown {
  return text === null ? undefined : JSON.parse(text);
}
