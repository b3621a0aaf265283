/**
 * Replicated server clusters of a test's own (`@baton/testing/clusters`), for specs that kill the
 * node that matters: each starts the infra/clusters/<server> scripts, on ports of its own, and
 * stops them again.
 *
 * ```ts
 * const cluster = await startNatsCluster({ clientPort: 14225, routePort: 14325, httpPort: 14425 });
 * await cluster.kill((await cluster.streamLeader('BATON_JOURNAL'))!);
 * const kafka = await startKafkaCluster({ brokerPort: 19092, controllerPort: 19192 });
 * const postgres = await startPostgresCluster();
 * const redis = await startRedisCluster();
 * ```
 */
export type { NatsCluster, NatsClusterOptions, NatsNode } from './nats.js';
export { NATS_NODES, startNatsCluster } from './nats.js';
export type { KafkaCluster, KafkaClusterOptions, KafkaNode } from './kafka.js';
export { startKafkaCluster } from './kafka.js';
export type { PostgresCluster, PostgresClusterOptions, PostgresNode } from './postgres.js';
export { startPostgresCluster } from './postgres.js';
export type { RedisCluster, RedisClusterOptions, RedisClusterPorts } from './redis.js';
export { endThroughSentinelRace, pingWithin, startRedisCluster, TEST_REDIS_CLUSTER_PORTS } from './redis.js';
