/**
 * Replicated server clusters for failover tests (`@baton/testing/clusters`): each starts the
 * infra/clusters/<server> scripts from a test and stops them again.
 *
 * ```ts
 * import { startPostgresCluster } from '@baton/testing/clusters';
 * ```
 */
export type { PostgresCluster, PostgresClusterOptions, PostgresNode } from './postgres.js';
export { startPostgresCluster } from './postgres.js';
