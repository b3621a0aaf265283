/**
 * Server clusters of a test's own, for specs that kill the node that matters.
 *
 * ```ts
 * const cluster = await startNatsCluster({ clientPort: 14225, routePort: 14325, httpPort: 14425 });
 * await cluster.kill((await cluster.streamLeader('BATON_JOURNAL'))!);
 * ```
 */
export type { NatsCluster, NatsClusterOptions, NatsNode } from './nats.js';
export { NATS_NODES, startNatsCluster } from './nats.js';
