/**
 * Numbered SQL migrations (`migrations/NNN_name.sql`, shipped next to the compiled code) and the
 * runner that applies the pending ones when a store connects.
 *
 * Invariants:
 * 1. Migrations are applied in one transaction under `pg_advisory_xact_lock(MIGRATION_LOCK_KEY)`,
 *    so workers starting together apply each one exactly once; the others wait, then find
 *    nothing to do.
 * 2. `schema_migrations` records every applied version in the same transaction as its DDL:
 *    a migration is either applied and recorded, or neither.
 * 3. A fully migrated schema needs no lock and no CREATE privilege: the runner checks first,
 *    so a role that may only use a schema an administrator prepared can connect.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { PoolClient } from 'pg';
import type { BackendError } from '@baton/core/adapter';
import { pgError, usageGrants } from './errors.js';
import type { ResolvedPostgresStoreOptions } from './options.js';
import { inSchema, quoteIdent } from './sql.js';

/**
 * Key of the transaction-level advisory lock migrations run under ("BATON" in ASCII). One key
 * for every schema: migrating is rare and short, and one key keeps the lock easy to find in
 * pg_locks (`locktype = 'advisory' AND objsubid = 1`).
 */
export const MIGRATION_LOCK_KEY = 0x42_41_54_4f_4e;

/** One migration file. */
export interface Migration {
  version: number;
  name: string;
  /** The SQL with `{{schema}}` tokens still in it. */
  sql: string;
}

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const FILE_PATTERN = /^(\d{3})_([a-z0-9_]+)\.sql$/;

let cached: Migration[] | undefined;

/** The migration files, by version. Numbering must run 1, 2, 3… without gaps. */
export function loadMigrations(): Migration[] {
  if (cached !== undefined) return cached;
  const migrations = readdirSync(MIGRATIONS_DIR)
    .map((file) => ({ file, match: FILE_PATTERN.exec(file) }))
    .filter((f): f is { file: string; match: RegExpExecArray } => f.match !== null)
    .map(({ file, match }) => ({
      version: Number(match[1]),
      name: match[2] ?? file,
      sql: readFileSync(new URL(file, MIGRATIONS_DIR), 'utf8'),
    }))
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    // A gap or a duplicate is a packaging mistake; applying around it would corrupt the schema.
    if (m.version !== i + 1) {
      throw new Error(
        `store-postgres migrations: expected version ${i + 1}, found ${m.version}_${m.name}.sql`,
      );
    }
  });
  cached = migrations;
  return migrations;
}

/** Applies the pending migrations to the store's schema (creating the schema if needed). */
export async function migrate(client: PoolClient, options: ResolvedPostgresStoreOptions): Promise<void> {
  const migrations = loadMigrations();
  const latest = migrations.at(-1)?.version ?? 0;
  const who = await client.query<{ role: string; database: string }>(
    'SELECT current_user AS role, current_database() AS database',
  );
  const { role, database } = who.rows[0] ?? { role: options.user, database: options.database };
  try {
    if ((await appliedVersion(client, options)) >= latest) return;
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    const exists = await client.query('SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1', [
      options.schema,
    ]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${options.quotedSchema}`);
    await client.query(
      inSchema(
        `CREATE TABLE IF NOT EXISTS {{schema}}.schema_migrations (
           version    integer PRIMARY KEY,
           name       text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
        options.quotedSchema,
      ),
    );
    const done = await client.query<{ version: number }>(
      inSchema('SELECT version FROM {{schema}}.schema_migrations', options.quotedSchema),
    );
    const applied = new Set(done.rows.map((r) => r.version));
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query(inSchema(migration.sql, options.quotedSchema));
      await client.query(
        inSchema(
          'INSERT INTO {{schema}}.schema_migrations (version, name) VALUES ($1, $2)',
          options.quotedSchema,
        ),
        [migration.version, migration.name],
      );
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    if ((err as { code?: unknown }).code === '42501') throw privilegeError(err, options, role, database);
    throw err;
  }
}

/** The highest applied version, or 0 when the schema or its bookkeeping table is missing. */
async function appliedVersion(client: PoolClient, options: ResolvedPostgresStoreOptions): Promise<number> {
  const table = await client.query(
    `SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relname = 'schema_migrations'`,
    [options.schema],
  );
  if (table.rowCount === 0) return 0;
  const max = await client.query<{ version: number | null }>(
    inSchema('SELECT max(version) AS version FROM {{schema}}.schema_migrations', options.quotedSchema),
  );
  return max.rows[0]?.version ?? 0;
}

function privilegeError(
  err: unknown,
  options: ResolvedPostgresStoreOptions,
  role: string,
  database: string,
): BackendError {
  const detail = (err as Error).message;
  const schema = options.quotedSchema;
  const fix = /for database/i.test(detail)
    ? `Either GRANT CREATE ON DATABASE ${quoteIdent(database)} TO ${quoteIdent(role)}, or have an ` +
      `administrator run CREATE SCHEMA ${schema} AUTHORIZATION ${quoteIdent(role)} once`
    : /for schema/i.test(detail)
      ? `GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${quoteIdent(role)}, or let the schema's owner connect once to migrate it`
      : `Run as an administrator: ${usageGrants(schema, quoteIdent(role))}`;
  return pgError(
    'privileges',
    `postgres store: role "${role}" cannot prepare schema "${options.schema}" in database "${database}" ` +
      `(${detail}). ${fix}`,
    { cause: err },
  );
}
