/**
 * The package's code its registration needs, in a module of its own: registration.ts imports it
 * lazily (`load()`), and index.ts provides it to whoever imported the package. Neither of those
 * modules is imported from here, so the lazy import closes no cycle.
 */
import { kafkaTransport } from './kafka-transport.js';
import { deleteKafkaTopics, listKafkaTopics } from './admin.js';

/** What the registration needs of the package's code. */
export interface KafkaCode {
  kafkaTransport: typeof kafkaTransport;
  deleteKafkaTopics: typeof deleteKafkaTopics;
  listKafkaTopics: typeof listKafkaTopics;
}

export const kafkaAdapterCode: KafkaCode = {
  kafkaTransport,
  deleteKafkaTopics,
  listKafkaTopics,
};
