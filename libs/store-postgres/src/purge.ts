/**
 * Drops a store's schema with everything in it: for tearing down a test namespace or a whole
 * deployment. Not used by the store itself; the schema must be named explicitly.
 */
import pg from 'pg';
import { ConfigError } from '@baton/core';
import { clientConfig } from './db.js';
import { resolvePostgresStoreOptions, type PostgresStoreOptions } from './options.js';

/** Drops `schema` (cascade) if it exists. */
export async function dropPostgresSchema(options: PostgresStoreOptions & { schema: string }): Promise<void> {
  if (!options.schema) throw new ConfigError('dropPostgresSchema needs the schema to drop');
  const resolved = resolvePostgresStoreOptions(options);
  const client = new pg.Client(clientConfig(resolved, 'baton-purge'));
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(`drop schema if exists ${resolved.quotedSchema} cascade`);
  } finally {
    await client.end();
  }
}
