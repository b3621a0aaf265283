/** Administrative helpers: deleting a prefix's topics and group (tests, resetting an environment). */
import { createKafkaClient } from './client.js';
import { toKafkaError } from './errors.js';
import { layoutFor } from './layout.js';
import { resolveKafkaOptions, type KafkaTransportOptions } from './options.js';
import { withKafkaRetries } from './retry.js';
import { deleteTopics } from './setup.js';

/**
 * Deletes `<prefix>.runs`, `<prefix>.journal`, `<prefix>.journal.groups`, `<prefix>.dlq` and the group
 * `<prefix>-workers`.
 */
export async function deleteKafkaTopics(options: KafkaTransportOptions & { prefix: string }): Promise<void> {
  const resolved = resolveKafkaOptions(options);
  const admin = createKafkaClient(resolved, undefined).admin();
  try {
    await admin.connect();
    await withKafkaRetries({ brokers: resolved.displayBrokers, operation: 'deleteKafkaTopics' }, () =>
      deleteTopics(admin, layoutFor(resolved.prefix)),
    );
  } catch (err) {
    throw toKafkaError(err, { brokers: resolved.displayBrokers, operation: 'deleteKafkaTopics' });
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
