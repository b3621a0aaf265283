/**
 * Drops a store's schema with everything in it: for tearing down a test namespace or a whole
 * deployment (`baton admin drop`, after listing it). Not used by the store itself; the schema must
 * be named explicitly.
 */
import pg from 'pg';
import { ConfigError } from '@baton/core';
import type { InstallationListing } from '@baton/core/adapter';
import { clientConfig } from './db.js';
import { loadMigrations } from './migrations.js';
import { resolvePostgresStoreOptions, type PostgresStoreOptions } from './options.js';

/** One thing the listing names. */
type InstallationItem = InstallationListing['items'][number];

/** Drops `schema` (cascade) if it exists. */
export async function dropPostgresSchema(options: PostgresStoreOptions & { schema: string }): Promise<void> {
  if (!options.schema) throw new ConfigError('dropPostgresSchema needs the schema to drop');
  const resolved = resolvePostgresStoreOptions(options);
  await withClient(resolved, async (client) => {
    await client.query(`drop schema if exists ${resolved.quotedSchema} cascade`);
  });
}

/** Objects named in the schema's objects that the store does not create, in the refusal. */
const EXAMPLES = 3;

/**
 * The names of the tables, views and functions the store's migrations create (and its
 * `schema_migrations`): what a schema holding only a store's data holds.
 */
export function storeObjectNames(): Set<string> {
  const names = new Set(['schema_migrations']);
  const created =
    /CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW|FUNCTION)\s+(?:IF\s+NOT\s+EXISTS\s+)?\{\{schema\}\}\.(\w+)/gi;
  for (const { sql } of loadMigrations()) for (const match of sql.matchAll(created)) names.add(match[1]!);
  return names;
}

/**
 * The schema and its tables (with the server's estimate of their rows), when it exists; `shared`
 * when it holds a table, view or function the store does not create (another application's), or
 * is `public`, the database's default, where any application may create its objects at any time.
 * Changes nothing.
 */
export async function listPostgresSchema(
  options: PostgresStoreOptions & { schema: string },
): Promise<InstallationListing> {
  const resolved = resolvePostgresStoreOptions(options);
  return withClient(resolved, async (client) => {
    const schema = resolved.schema;
    const found = await client.query('SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1', [schema]);
    if (found.rowCount === 0) return { items: [] };
    const objects = await client.query<{ name: string; kind: string; rows: string | null }>(
      `SELECT c.relname AS name, c.relkind::text AS kind, s.n_live_tup::text AS rows
         FROM pg_catalog.pg_class c
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = c.oid
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
       UNION ALL
       SELECT DISTINCT p.proname, 'function', NULL
         FROM pg_catalog.pg_proc p
         JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = $1
        ORDER BY 1`,
      [schema],
    );
    const tables = objects.rows.filter((o) => o.kind === 'r' || o.kind === 'p');
    const items: InstallationItem[] = [
      {
        kind: 'schema',
        name: schema,
        detail: `${tables.length} table(s), ${objects.rows.length - tables.length} view(s) and function(s)`,
      },
      ...tables.map((t) => ({
        kind: 'table',
        name: `${schema}.${t.name}`,
        detail: `~${t.rows ?? 0} row(s)`,
      })),
    ];
    const ours = storeObjectNames();
    const foreign = objects.rows.filter((o) => !ours.has(o.name)).map((o) => `${schema}.${o.name}`);
    if (schema === 'public')
      return {
        items,
        shared:
          "the schema is public, the database's default, where other applications keep their objects: " +
          'dropping it would remove them too; drop the Baton tables by hand, or give the store a schema of its own (BATON_POSTGRES_SCHEMA)',
      };
    if (foreign.length === 0) return { items };
    return {
      items,
      shared:
        `${foreign.length} object(s) in schema ${schema} are not the Postgres store's ` +
        `(e.g. ${foreign.slice(0, EXAMPLES).join(', ')}): another application keeps data there, and dropping ` +
        'the schema would remove it too',
    };
  });
}

async function withClient<T>(
  resolved: ReturnType<typeof resolvePostgresStoreOptions>,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client(clientConfig(resolved, 'baton-purge'));
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
