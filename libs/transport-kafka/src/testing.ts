/**
 * `@baton/transport-kafka/testing`: for tests only, never for a production entry point. The Kafka
 * transport with its view of the run queue in this process (the partitions it owns, its
 * generation), which specs of partition ownership read; the package's door gives only the
 * {@link Transport} contract.
 *
 * @example
 * const transport = createKafkaTransport({ brokers, prefix });
 * transport.queueStats().assignedPartitions; // [0, 2]
 */
export { createKafkaTransport, type KafkaTransport } from './kafka-transport.js';
export type { KafkaQueueStats } from './run-buffer.js';
