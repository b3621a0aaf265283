/**
 * The Postgres store as the worker process knows it (`@baton/core/adapter`'s
 * AdapterRegistration): `postgres://` and `postgresql://` URLs, the BATON_POSTGRES_* variables,
 * and the schema shown in the `worker ready` line. This module (the package's `/registration`
 * export) imports none of the store's code (pg): `load()` does (AdapterCode).
 */
import { ConfigError } from '@baton/core';
import {
  AdapterCode,
  checkedStore,
  textSetting,
  wholeNumberSetting,
  type AdapterRegistration,
  type AdapterVariable,
} from '@baton/core/adapter';
import { resolvePostgresStoreOptions, SYNCHRONOUS_COMMIT_LEVELS, type SynchronousCommit } from './options.js';
import type { PostgresCode } from './code.js';

export type { PostgresCode } from './code.js';

/** The package's code, loaded when a process picks this store. */
export const postgresCode = new AdapterCode<PostgresCode>(
  'the Postgres store',
  async () => (await import('./code.js')).postgresAdapterCode,
);

/** The settings the BATON_POSTGRES_* variables give. */
export interface PostgresSettings {
  schema?: string;
  poolSize?: number;
  synchronousCommit?: SynchronousCommit;
  requireSynchronousStandby?: boolean;
  preparedStatements?: boolean;
}

/** `true`/`1` or `false`/`0`, as the worker's own switches are spelled. */
function switchSetting(name: string, description: string, option: string): AdapterVariable<boolean> {
  return {
    name,
    description,
    option,
    parse: (value, variable) => {
      if (value === 'true' || value === '1') return true;
      if (value === 'false' || value === '0') return false;
      throw new ConfigError(`${variable} is '${value}'; it must be true, 1, false or 0`);
    },
  };
}

/** The schema the store uses: the setting, else `baton`. */
function schemaOf(url: string, { schema }: PostgresSettings): string {
  return resolvePostgresStoreOptions({ url, ...(schema !== undefined && { schema }) }).schema;
}

export const postgresRegistration: AdapterRegistration<'postgres', 'store', PostgresSettings> = {
  name: 'postgres',
  kind: 'store',
  schemes: ['postgres', 'postgresql'],
  variables: {
    schema: {
      ...textSetting(
        'BATON_POSTGRES_SCHEMA',
        'the Postgres schema (created and migrated at start, under an advisory lock)',
        'schema',
      ),
      default: '`baton`',
    },
    poolSize: {
      ...wholeNumberSetting(
        'BATON_POSTGRES_POOL_SIZE',
        "connections in the Postgres store's pool (each worker holds one more for its presence lock); more helps a worker with many runs in flight, within the server's `max_connections`",
        1,
        'poolSize',
      ),
      default: '`10`',
    },
    synchronousCommit: {
      name: 'BATON_POSTGRES_SYNCHRONOUS_COMMIT',
      default: "the server's",
      description:
        "`synchronous_commit` of the store's sessions (`remote_apply`, `on`, `remote_write`, `local`, `off`); see [docs/production.md](docs/production.md)",
      option: 'synchronousCommit',
      parse: (value, variable) => {
        const level = SYNCHRONOUS_COMMIT_LEVELS.find((l) => l === value);
        if (level === undefined) {
          throw new ConfigError(
            `${variable} is '${value}'; it must be one of ${SYNCHRONOUS_COMMIT_LEVELS.join(', ')}`,
          );
        }
        return level;
      },
    },
    requireSynchronousStandby: {
      ...switchSetting(
        'BATON_POSTGRES_REQUIRE_SYNC',
        "`1`: refuse to start unless the server's commits wait for a synchronous standby ([docs/production.md](docs/production.md))",
        'requireSynchronousStandby',
      ),
      default: '`0`',
    },
    preparedStatements: {
      ...switchSetting(
        'BATON_POSTGRES_PREPARED_STATEMENTS',
        "`0` sends the store's statements unprepared; by default each is prepared once per connection (a fifth to a half of the server's CPU per call, [docs/performance.md](docs/performance.md)). Set `0` behind PgBouncer in transaction mode older than 1.21 (the store also stops preparing by itself when the server says a statement is gone)",
        'preparedStatements',
      ),
      default: '`1`',
    },
  },
  urlOption: 'url',
  load: () => postgresCode.load(),
  // What postgresStore() does (it lives in index.ts, which exports this file).
  create: (url, { schema, poolSize, synchronousCommit, requireSynchronousStandby, preparedStatements }) =>
    checkedStore(
      new (postgresCode.get().PostgresStore)(
        resolvePostgresStoreOptions({
          url,
          ...(schema !== undefined && { schema }),
          ...(poolSize !== undefined && { poolSize }),
          ...(synchronousCommit !== undefined && { synchronousCommit }),
          ...(requireSynchronousStandby !== undefined && { requireSynchronousStandby }),
          ...(preparedStatements !== undefined && { preparedStatements }),
        }),
      ),
    ),
  // The schema as the store resolves it: unset is the default installation's (`baton`).
  installation: {
    list: async (url, settings) =>
      (await postgresCode.load()).listPostgresSchema({ url, schema: schemaOf(url, settings) }),
    drop: async (url, settings) => {
      await (await postgresCode.load()).dropPostgresSchema({ url, schema: schemaOf(url, settings) });
    },
  },
  isolation: { settings: (id) => ({ schema: id }) },
  describeNamespace: (url, settings) => ({ postgresSchema: schemaOf(url, settings) }),
};
