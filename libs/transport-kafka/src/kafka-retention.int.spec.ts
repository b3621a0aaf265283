/**
 * Retention on Kafka: the journal topic gets `retention.ms` from `journalRetentionMs` when the
 * transport creates it, and journal.purge is the documented no-op (the records stay).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { kafkaTestUrl } from '@baton/testing/servers';
import { createKafkaTransport as kafkaTransport, type KafkaTransport } from './kafka-transport.js';
import { brokerOf, testPrefixes } from './test-prefixes.spec-helper.js';

const prefixes = testPrefixes(kafkaTestUrl());
afterAll(() => prefixes.cleanUp(), 30_000);

const open: KafkaTransport[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((t) => t.close()));
});

async function retentionOf(topic: string): Promise<string | undefined> {
  const admin = new Kafka({ brokers: [brokerOf(kafkaTestUrl())], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms'] }],
    });
    return resources[0]?.configEntries.find((e) => e.configName === 'retention.ms')?.configValue;
  } finally {
    await admin.disconnect();
  }
}

describe('kafka transport: journal retention', () => {
  it('creates the journal topic with retention.ms = journalRetentionMs, and only that topic', async () => {
    const prefix = prefixes.next();
    const transport = kafkaTransport({
      brokers: kafkaTestUrl(),
      prefix,
      partitions: 2,
      journalRetentionMs: 123_456_789,
    });
    open.push(transport);
    await transport.connect();
    expect(await retentionOf(`${prefix}.journal`)).toBe('123456789');
    expect(await retentionOf(`${prefix}.runs`)).not.toBe('123456789');
  }, 60_000);

  it("keeps a purged run's records until retention: journal.purge is a no-op", async () => {
    const transport = kafkaTransport({ brokers: kafkaTestUrl(), prefix: prefixes.next(), partitions: 2 });
    open.push(transport);
    await transport.connect();
    expect(transport.journal.purgeMode).toBe('retention');
    await transport.journal.append({ runId: 'kept', data: new Uint8Array([7]) });
    await transport.journal.purge('kept');
    expect((await transport.journal.read('kept', 0)).map((r) => [...r.data])).toEqual([[7]]);
  }, 60_000);
});
