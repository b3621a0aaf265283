/**
 * The shared Kafka test broker (`infra/kafka/start.sh`, or docker-compose's `kafka` service): it
 * answers the Kafka protocol as a KRaft single node, topics can be created and deleted, and
 * start.sh leaves a running broker alone. With no broker at the test URL these tests fail with a
 * connection error; they never skip.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { isReachable, kafkaTestUrl } from './servers.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const url = new URL(kafkaTestUrl());
const broker = `${url.hostname}:${url.port}`;
const onLoopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);

async function withAdmin<T>(use: (admin: Admin) => Promise<T>): Promise<T> {
  const kafka = new Kafka({
    clientId: 'baton-kafka-broker-spec',
    brokers: [broker],
    connectionTimeout: 2_000,
    retry: { retries: 2 },
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}

describe('Kafka test broker', () => {
  // start.sh looks at 127.0.0.1 only: against a remote broker this case says nothing.
  it.runIf(onLoopback)('start.sh leaves a broker that already answers alone', async () => {
    expect(await isReachable(url.href), `no Kafka broker answers at ${url.href}`).toBe(true);
    const began = Date.now();
    const result = spawnSync('bash', [`${REPO_ROOT}infra/kafka/start.sh`], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, BATON_KAFKA_PORT: url.port },
      timeout: 15_000,
    });
    const elapsed = Date.now() - began;
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/already answers on 127\.0\.0\.1:\d+; nothing to do/);
    expect(elapsed).toBeLessThan(5_000);
  });

  it('answers as a KRaft single node with id 1', async () => {
    const cluster = await withAdmin((admin) => admin.describeCluster());
    expect(cluster.brokers.map((b) => b.nodeId)).toEqual([1]);
    expect(cluster.controller).toBe(1);
    expect(cluster.clusterId).toMatch(/\S/);
  });

  it('creates and deletes a topic', async () => {
    const topic = `baton-broker-check-${randomUUID()}`;
    await withAdmin(async (admin) => {
      const created = await admin.createTopics({
        topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
        waitForLeaders: true,
      });
      expect(created).toBe(true);
      try {
        const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
        expect(metadata?.partitions.map((p) => p.leader)).toEqual([1]);
      } finally {
        await admin.deleteTopics({ topics: [topic], timeout: 5_000 });
      }
      // A deletion reaches the metadata every broker answers with a moment later: bounded wait.
      await expect
        .poll(async () => admin.listTopics(), { timeout: 10_000, interval: 100 })
        .not.toContain(topic);
    });
  });
});
