/**
 * The Postgres store as the worker process knows it (`@baton/core/adapter`'s
 * AdapterRegistration): `postgres://` and `postgresql://` URLs, the BATON_POSTGRES_* variables,
 * and the schema shown in the `worker ready` line.
 */
import { textSetting, wholeNumberSetting, type AdapterRegistration } from '@baton/core/adapter';
import { resolvePostgresStoreOptions } from './options.js';
import { PostgresStore } from './postgres-store.js';
import { dropPostgresSchema } from './purge.js';

/** The settings the BATON_POSTGRES_* variables give. */
export interface PostgresSettings {
  schema?: string;
  poolSize?: number;
}

export const postgresRegistration: AdapterRegistration<'postgres', 'store', PostgresSettings> = {
  name: 'postgres',
  kind: 'store',
  schemes: ['postgres', 'postgresql'],
  variables: {
    schema: textSetting(
      'BATON_POSTGRES_SCHEMA',
      'the Postgres schema (created and migrated at start, under an advisory lock); default baton',
      /\bschema\b/,
    ),
    poolSize: wholeNumberSetting(
      'BATON_POSTGRES_POOL_SIZE',
      "connections in the store's pool (each worker holds one more for its presence lock); default 10",
      1,
      /\bpoolSize\b/,
    ),
  },
  messages: { prefix: /^postgresStore: /, url: /\burl\b/ },
  // What postgresStore() does (it lives in index.ts, which exports this file).
  create: (url, { schema, poolSize }) =>
    new PostgresStore(
      resolvePostgresStoreOptions({
        url,
        ...(schema !== undefined && { schema }),
        ...(poolSize !== undefined && { poolSize }),
      }),
    ),
  isolation: {
    settings: (id) => ({ schema: id }),
    // dropPostgresSchema refuses an empty schema itself.
    remove: (url, { schema }) => dropPostgresSchema({ url, schema: schema ?? '' }),
  },
  describeNamespace: (url, { schema }) => ({
    postgresSchema: resolvePostgresStoreOptions({ url, ...(schema !== undefined && { schema }) }).schema,
  }),
};
