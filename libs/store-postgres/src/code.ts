/**
 * The package's code its registration needs, in a module of its own: registration.ts imports it
 * lazily (`load()`), and index.ts provides it to whoever imported the package. Neither of those
 * modules is imported from here, so the lazy import closes no cycle.
 */
import { PostgresStore } from './postgres-store.js';
import { dropPostgresSchema, listPostgresSchema } from './purge.js';

/** What the registration needs of the package's code. */
export interface PostgresCode {
  PostgresStore: typeof PostgresStore;
  dropPostgresSchema: typeof dropPostgresSchema;
  listPostgresSchema: typeof listPostgresSchema;
}

export const postgresAdapterCode: PostgresCode = {
  PostgresStore,
  dropPostgresSchema,
  listPostgresSchema,
};
