/**
 * The pool every store operation goes through: renders `{{schema}}` once per statement text,
 * parses bigint columns (ms timestamps, epochs) as numbers, repeats a statement the server
 * aborted for a deadlock, and never lets an idle connection's error crash the process.
 */
import { createHash } from 'node:crypto';
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

/**
 * SQLSTATEs after which a named statement is sent unprepared: 26000, the statement is not on the
 * connection (a pooler in transaction mode handed the call to another server connection; the
 * store stops preparing for good), and 0A000, "cached plan must not change result type" (a
 * migration changed the type of what the statement returns while it was prepared; the text goes
 * out under a new name from then on, prepared afresh on each connection).
 */
const STATEMENT_GONE = '26000';
const PLAN_CHANGED = '0A000';

/** The store's pool with schema rendering, prepared statements and deadlock retries. */
export class Db {
  readonly pool: pg.Pool;
  private readonly rendered = new Map<string, string>();
  /** Rendered statement text → its prepared statement's name. */
  private readonly names = new Map<string, string>();
  private prepare: boolean;
  private renames = 0;

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
    this.prepare = options.preparedStatements;
  }

  /** True while statements go out prepared (see the `preparedStatements` option). */
  get preparing(): boolean {
    return this.prepare;
  }

  /** Runs one statement (one round trip) and returns its rows. */
  async query<R extends QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    const sql = this.render(text);
    let unprepared = false;
    for (let attempt = 1; ; attempt++) {
      // A statement without parameters goes out as a simple query (it may hold several
      // commands, which a prepared statement cannot); those with parameters are prepared.
      const name = this.prepare && !unprepared && values.length > 0 ? this.nameOf(sql) : undefined;
      try {
        const result =
          name === undefined
            ? await this.pool.query<R>(sql, values)
            : await this.pool.query<R>({ name, text: sql, values });
        return result.rows;
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (name !== undefined && (code === STATEMENT_GONE || code === PLAN_CHANGED)) {
          // Nothing ran: the server refused the statement before executing it.
          if (code === STATEMENT_GONE) this.prepare = false;
          else this.names.set(sql, `${name.split('-')[0]!}-${++this.renames}`);
          unprepared = true;
          attempt--;
          continue;
        }
        // Each statement is its own transaction, so an aborted one changed nothing.
        if (attempt < CONFLICT_ATTEMPTS && isTransactionConflict(err)) continue;
        throw err;
      }
    }
  }

  /** A name per statement text, the same in every process (a hash of the text). */
  private nameOf(sql: string): string {
    let name = this.names.get(sql);
    if (name === undefined) {
      name = `baton_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
      this.names.set(sql, name);
    }
    return name;
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
