/**
 * Server clusters for the cluster crash specs (`@baton/testing/clusters`): real processes
 * started with the infra/clusters scripts, on ports of their own.
 */
export type { RedisCluster, RedisClusterOptions, RedisClusterPorts } from './redis.js';
export { startRedisCluster, TEST_REDIS_CLUSTER_PORTS } from './redis.js';
