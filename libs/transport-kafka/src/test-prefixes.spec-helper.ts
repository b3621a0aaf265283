/**
 * Prefixes for tests on the shared Kafka broker: one family per spec file, so afterAll deletes
 * every topic and consumer group the file created, and nothing any other suite created.
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';

export interface TestPrefixes {
  /** A fresh prefix in this file's family. */
  next(): string;
  /** Deletes every topic and group of the family. */
  cleanUp(): Promise<void>;
}

/** `kafka://host:port` → `host:port` for a bare kafkajs client. */
export function brokerOf(url: string): string {
  return url.replace(/^kafkas?:\/\//, '').replace(/\/.*$/, '');
}

export function testPrefixes(url: string): TestPrefixes {
  const family = `t${randomBytes(5).toString('hex')}`;
  let count = 0;
  return {
    next: () => `${family}-${++count}`,
    cleanUp: async () => {
      const admin = new Kafka({ brokers: [brokerOf(url)], logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      try {
        const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${family}-`));
        if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 15_000 });
        const { groups } = await admin.listGroups();
        const doomed = groups.map((g) => g.groupId).filter((g) => g.startsWith(`${family}-`));
        if (doomed.length > 0) await admin.deleteGroups(doomed).catch(() => undefined);
      } finally {
        await admin.disconnect();
      }
    },
  };
}
