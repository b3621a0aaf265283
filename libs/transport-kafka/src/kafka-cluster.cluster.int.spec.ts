/**
 * The Kafka transport on a real 3-broker cluster (infra/clusters/kafka through
 * `@baton/testing/clusters`): topics created with the replication factor and min.insync.replicas
 * asked for, a clear error when the cluster has fewer brokers than the factor, and the lost-ack
 * rule: while the leader of the journal partitions is SIGKILLed mid-stream, every append resolves
 * and every run's journal holds each record exactly once, in order; and the same for group records,
 * each read back at the position its append resolved with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { performance } from 'node:perf_hooks';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { startKafkaCluster, type KafkaCluster, type KafkaNode } from '@baton/testing/clusters';
import { createKafkaTransport as kafkaTransport, type KafkaTransport } from './kafka-transport.js';
import { APPEND_ID } from './append-retry.js';
import { partitionForKey } from './layout.js';

let cluster: KafkaCluster;
const open: KafkaTransport[] = [];

beforeAll(async () => {
  // Ports of its own (tests/system's cluster-kafka spec takes the defaults, 19092 and 19192): the
  // cluster specs run two at a time (vitest.config.ts), so the two Kafka clusters may run together.
  cluster = await startKafkaCluster({ brokerPort: 19095, controllerPort: 19195 });
}, 400_000);
afterAll(async () => {
  await Promise.allSettled(open.splice(0).map((t) => t.close()));
  await cluster?.stop();
}, 120_000);

function transport(
  prefix: string,
  extra: Partial<Parameters<typeof kafkaTransport>[0]> = {},
): KafkaTransport {
  const t = kafkaTransport({
    brokers: cluster.url,
    prefix,
    partitions: 2,
    replicationFactor: 3,
    minInsyncReplicas: 2,
    requestTimeoutMs: 5_000,
    ...extra,
  });
  open.push(t);
  return t;
}

async function minInsyncOf(topic: string): Promise<string | undefined> {
  const admin = new Kafka({ brokers: cluster.brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['min.insync.replicas'] }],
    });
    return resources[0]?.configEntries.find((e) => e.configName === 'min.insync.replicas')?.configValue;
  } finally {
    await admin.disconnect();
  }
}

/**
 * Waits until every writer had `atLeast` appends acknowledged (or one failed): the writes flow on
 * every log before the leader is killed. (Not a fixed two seconds: on a quiet machine that is
 * hundreds of appends, on a loaded one it could be none.)
 */
async function everyWriterAcknowledged(
  counts: () => number[],
  failures: unknown[],
  atLeast = 5,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (failures.length === 0 && counts().some((n) => n < atLeast)) {
    if (Date.now() > deadline)
      throw new Error(`writers acknowledged ${counts().join(',')} within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

describe('kafka transport on a 3-broker cluster', () => {
  it('creates its topics with 3 replicas, all in sync, and min.insync.replicas 2', async () => {
    // Three replicas need three live brokers: seen in CI, one fenced for a moment on a loaded machine.
    await cluster.waitForBrokers();
    const t = transport('rf3');
    await t.connect();
    for (const topic of ['rf3.runs', 'rf3.journal', 'rf3.journal.groups', 'rf3.dlq']) {
      const isr = await cluster.inSyncReplicas(topic);
      expect(isr.size).toBeGreaterThan(0);
      for (const replicas of isr.values()) expect([...replicas].sort()).toEqual([1, 2, 3]);
      expect(await minInsyncOf(topic)).toBe('2');
    }
  }, 60_000);

  it('refuses a replication factor above the number of brokers, naming both and the variable', async () => {
    const t = transport('rf4', { replicationFactor: 4, minInsyncReplicas: 2 });
    await expect(t.connect()).rejects.toThrow(
      /replicationFactor 4 needs at least 4 brokers, but the cluster at .* has 3 registered.*BATON_KAFKA_REPLICATION_FACTOR/,
    );
  }, 60_000);

  it('answers every group record append, each read back at its position, while the group topic leader is SIGKILLed', async () => {
    const t = transport('glostack');
    await t.connect();
    // One log per writer, each appending one record at a time, as a worker's committer does.
    const logs = Array.from({ length: 8 }, (_, i) => `w${i}`);
    const written = new Map<string, Array<{ position: number; data: string }>>(logs.map((l) => [l, []]));
    let stop = false;
    const failures: unknown[] = [];
    const writer = async (log: string): Promise<void> => {
      for (let k = 0; !stop; k++) {
        const data = `${log}:${k}`;
        try {
          const position = await t.groupLog.appendGroupRecord(log, new TextEncoder().encode(data));
          written.get(log)!.push({ position, data });
        } catch (err) {
          failures.push(err);
          return;
        }
      }
    };
    const writers = Promise.all(logs.map(writer));
    await everyWriterAcknowledged(() => [...written.values()].map((w) => w.length), failures);
    const victim = (await cluster.partitionLeaders('glostack.journal.groups')).get(0) as KafkaNode;
    const count = (): number => [...written.values()].reduce((n, w) => n + w.length, 0);
    const beforeKill = count();
    await cluster.kill(victim);
    await new Promise((done) => setTimeout(done, 8_000));
    const afterKill = count();
    await cluster.start(victim);
    await new Promise((done) => setTimeout(done, 3_000));
    stop = true;
    await writers;
    console.log(
      `[kafka cluster] killed broker ${victim} (leader of group partition 0): ${beforeKill} group appends before, ` +
        `${afterKill - beforeKill} while it was down, ${count()} in all; ${JSON.stringify(t.groupLog.stats())}`,
    );
    expect(failures.map(String)).toEqual([]);
    expect(afterKill).toBeGreaterThan(beforeKill);
    for (const log of logs) {
      const records = written.get(log)!;
      const positions = records.map((r) => r.position);
      // Increasing within the log, so distinct: a reused producer sequence would repeat one.
      expect(positions, log).toEqual([...positions].sort((a, b) => a - b));
      expect(new Set(positions).size, log).toBe(positions.length);
      const read = await t.groupLog.readGroupRecords(log, positions);
      expect(
        records.map((r) => new TextDecoder().decode(read.get(r.position))),
        log,
      ).toEqual(records.map((r) => r.data));
    }
  }, 120_000);

  it('replays a record a retry wrote twice (same append id) once, at its first position', async () => {
    const t = transport('dup');
    await t.connect();
    const first = await t.journal.append({ runId: 'r', data: new TextEncoder().encode('a') });
    // What a retried append leaves when its first attempt became visible only after the read-back.
    // Retries: a broker may learn of the new topic a moment after the others.
    const producer = new Kafka({
      brokers: cluster.brokers,
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 300 },
    }).producer();
    await producer.connect();
    try {
      const copy = {
        key: 'r',
        value: 'b',
        partition: partitionForKey('r', 2),
        headers: { [APPEND_ID]: 'x-1' },
      };
      await producer.send({ topic: 'dup.journal', acks: -1, messages: [copy, copy] });
    } finally {
      await producer.disconnect();
    }
    await t.journal.append({ runId: 'r', data: new TextEncoder().encode('c') });
    const records = await t.journal.read('r', 0);
    expect(records.map((r) => new TextDecoder().decode(r.data))).toEqual(['a', 'b', 'c']);
    expect(records[1]!.position).toBe(first + 1);
  }, 60_000);

  it('loses no append and duplicates none while the journal leader broker is SIGKILLed and restarted', async () => {
    const t = transport('lostack');
    await t.connect();
    const runs = Array.from({ length: 16 }, (_, i) => `run-${i}`);
    const written = new Map<string, string[]>(runs.map((r) => [r, []]));
    const positions = new Map<string, number[]>(runs.map((r) => [r, []]));
    let stop = false;
    let slowestMs = 0;
    const failures: unknown[] = [];
    const writer = async (runId: string): Promise<void> => {
      let last = 0;
      for (let k = 0; !stop; k++) {
        const data = `${runId}:${k}`;
        const started = performance.now();
        try {
          last = await t.journal.append({
            runId,
            data: new TextEncoder().encode(data),
            expectedLastPosition: last,
          });
          written.get(runId)!.push(data);
          positions.get(runId)!.push(last);
        } catch (err) {
          failures.push(err);
          return;
        }
        slowestMs = Math.max(slowestMs, performance.now() - started);
      }
    };
    const writers = Promise.all(runs.map(writer));
    await everyWriterAcknowledged(() => [...written.values()].map((w) => w.length), failures);
    const leaders = await cluster.partitionLeaders('lostack.journal');
    const victim = leaders.get(0) as KafkaNode;
    const beforeKill = [...written.values()].reduce((n, w) => n + w.length, 0);
    await cluster.kill(victim);
    // Writes go on under a new leader with two in-sync replicas (min.insync 2).
    await new Promise((done) => setTimeout(done, 8_000));
    const afterKill = [...written.values()].reduce((n, w) => n + w.length, 0);
    await cluster.start(victim);
    await new Promise((done) => setTimeout(done, 3_000));
    stop = true;
    await writers;
    const total = [...written.values()].reduce((n, w) => n + w.length, 0);
    console.log(
      `[kafka cluster] killed broker ${victim} (leader of journal partition 0): ${beforeKill} appends before, ` +
        `${afterKill - beforeKill} while it was down, ${total} in all; slowest append ${slowestMs.toFixed(0)} ms`,
    );
    expect(failures.map(String)).toEqual([]);
    expect(afterKill).toBeGreaterThan(beforeKill);
    const reader = transport('lostack');
    await reader.connect();
    for (const runId of runs) {
      // Each acknowledged append got a position of its own (a reused producer sequence number
      // would make the broker answer a new record with an old record's offset, and drop it).
      const own = positions.get(runId)!;
      expect(new Set(own).size, `${runId}: positions ${own.join(',')}`).toBe(own.length);
      const records = (await reader.journal.read(runId, 0)).map((r) => new TextDecoder().decode(r.data));
      expect(records).toEqual(written.get(runId));
    }
  }, 120_000);
});
