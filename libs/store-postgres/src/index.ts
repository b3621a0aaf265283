/**
 * @baton/store-postgres: the Baton store on PostgreSQL. Leases with fencing epochs, checkpoints
 * with history, the run index with idempotency keys, timers, signal inboxes and worker presence,
 * in plain SQL migrations applied under an advisory lock; the server's clock decides every expiry.
 *
 * @example
 * ```ts
 * import { postgresStore } from '@baton/store-postgres';
 *
 * const store = postgresStore({ url: 'postgres://baton:secret@db:5432/app', schema: 'baton' });
 * await store.connect(); // creates the schema and applies pending migrations, once per fleet
 * const worker = new Worker({ transport, store, workflows: [loanApproval] });
 * ```
 */
import type { PresenceStore, Store } from '@baton/core/adapter';
import { resolvePostgresStoreOptions, type PostgresStoreOptions } from './options.js';
import { PostgresStore } from './postgres-store.js';
import { postgresAdapterCode } from './code.js';
import { postgresCode } from './registration.js';

/**
 * Creates a {@link Store} on PostgreSQL. Options are checked here (a bad URL or schema name
 * throws ConfigError at once); nothing connects until connect() or the first operation. It has
 * worker presence (optional in the contract), bound to a session-level advisory lock.
 */
export function postgresStore(
  options: PostgresStoreOptions = {},
): Store & { readonly presence: PresenceStore } {
  return new PostgresStore(resolvePostgresStoreOptions(options));
}

export type { PostgresStoreOptions, ResolvedPostgresStoreOptions, SynchronousCommit } from './options.js';
export {
  DEFAULT_POSTGRES_URL,
  DEFAULT_SCHEMA,
  resolvePostgresStoreOptions,
  SYNCHRONOUS_COMMIT_LEVELS,
} from './options.js';
export type { ReplicationSettings } from './replication.js';
export { readReplicationSettings } from './replication.js';
export type { PostgresStoreState } from './postgres-store.js';
export { PostgresStore } from './postgres-store.js';
export { POSTGRES_ERROR_CODES } from './errors.js';
export { MIGRATION_LOCK_KEY } from './migrations.js';
export { membershipChannel, PRESENCE_APPLICATION_PREFIX, presenceLockKeys } from './presence.js';
export { STORE_APPLICATION_PREFIX } from './db.js';
export { dropPostgresSchema } from './purge.js';
export { postgresRegistration, type PostgresSettings } from './registration.js';

// The registration holds none of the code above; importing the package provides it (AdapterCode).
postgresCode.provide(postgresAdapterCode);
