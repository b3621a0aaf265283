import { kafkaAdapterCode } from './code.js';
import { kafkaCode } from './registration.js';

export { kafkaTransport, type KafkaTransportExtras } from './kafka-transport.js';
export {
  DEFAULT_KAFKA_BROKERS,
  DEFAULT_KAFKA_PREFIX,
  resolveKafkaOptions,
  type KafkaPartitionOwnership,
  type KafkaSaslMechanism,
  type KafkaSaslOptions,
  type KafkaTransportOptions,
  type ResolvedKafkaOptions,
} from './options.js';
export { layoutFor, partitionForKey, type KafkaLayout } from './layout.js';
export type { KafkaLogHook } from './client.js';
export { deleteKafkaTopics } from './admin.js';
export { DEAD_LETTER_HEADERS } from './dead-letters.js';
export {
  measureKafkaProduceFloor,
  type KafkaProduceFloor,
  type KafkaProduceFloorOptions,
} from './produce-floor.js';
export { kafkaRegistration, type KafkaSettings } from './registration.js';

// The registration holds none of the code above; importing the package provides it (AdapterCode).
kafkaCode.provide(kafkaAdapterCode);
