/**
 * Administrative helpers: listing and deleting a prefix's topics and groups (tests, resetting an
 * environment, `baton admin drop`).
 */
import type { InstallationListing } from '@baton/core/adapter';
import { createKafkaClient } from './client.js';
import { toKafkaError } from './errors.js';
import { layoutFor } from './layout.js';
import { resolveKafkaOptions, type KafkaTransportOptions } from './options.js';
import { withKafkaRetries } from './retry.js';
import { deleteTopics, namesOf } from './setup.js';

/** One thing the listing names. */
type InstallationItem = InstallationListing['items'][number];

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

/**
 * The prefix's topics that exist, with the records they hold, and its consumer groups the brokers
 * know. Every name is the prefix's exactly (`<prefix>.runs`, `<prefix>-workers`): another prefix
 * names other topics, so nothing here is shared. Changes nothing.
 */
export async function listKafkaTopics(
  options: KafkaTransportOptions & { prefix: string },
): Promise<InstallationListing> {
  const resolved = resolveKafkaOptions(options);
  const admin = createKafkaClient(resolved, undefined).admin();
  const context = { brokers: resolved.displayBrokers, operation: 'listKafkaTopics' };
  try {
    await admin.connect();
    return await withKafkaRetries(context, async () => {
      const { topics, groups } = namesOf(layoutFor(resolved.prefix));
      const existing = new Set(await admin.listTopics());
      const items: InstallationItem[] = [];
      for (const topic of topics.filter((t) => existing.has(t))) {
        const offsets = await admin.fetchTopicOffsets(topic);
        const records = offsets.reduce((n, p) => n + (Number(p.high) - Number(p.low)), 0);
        items.push({
          kind: 'topic',
          name: topic,
          detail: `${records} record(s), ${offsets.length} partition(s)`,
        });
      }
      const known = new Set((await admin.listGroups()).groups.map((g) => g.groupId));
      for (const group of groups.filter((g) => known.has(g)))
        items.push({ kind: 'consumer group', name: group });
      return { items };
    });
  } catch (err) {
    throw toKafkaError(err, context);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
