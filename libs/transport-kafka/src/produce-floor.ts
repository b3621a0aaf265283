/**
 * The produce floor of a Kafka cluster as the transport sees it: how fast the brokers take records
 * through the transport's own producer (idempotent, acks=all, group commit), with no Baton logic
 * around it. The bench app reports it next to Baton's journal figures; kafkajs stays inside this
 * package, so the measurement lives here and hands back raw samples.
 *
 * It creates a one-partition topic of its own, measures, and deletes the topic again (also when the
 * measurement fails).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Admin } from 'kafkajs';
import { createKafkaClient } from './client.js';
import { toKafkaError } from './errors.js';
import { resolveKafkaOptions } from './options.js';
import { BatchingProducer } from './producer.js';

export interface KafkaProduceFloorOptions {
  /** Brokers as the transport's `brokers` option takes them (`kafka://host:9092`, …). */
  brokers: string | string[];
  /** Records of the throughput phase. @defaultValue 20000 */
  count?: number;
  /** Records outstanding at once in the throughput phase. @defaultValue 256 */
  inFlight?: number;
  /** Records of the sequential (one at a time) latency phase. @defaultValue 2000 */
  sequential?: number;
  /** Bytes of each record's value. @defaultValue 100 */
  messageBytes?: number;
  /** Called now and then with the records acknowledged so far out of all records of both phases. */
  onProgress?: (done: number, total: number) => void;
}

export interface KafkaProduceFloor {
  /** Send-to-acknowledgement time of each sequential record, milliseconds. */
  sequentialMs: number[];
  /** Records of the throughput phase. */
  count: number;
  inFlight: number;
  messageBytes: number;
  /** Wall time of the throughput phase, milliseconds. */
  wallMs: number;
  /** The brokers as they may be shown (secrets masked). */
  brokers: string;
}

const WARM_UP = 20;
const PROGRESS_EVERY = 200;

/**
 * Measures sequential send latency and pipelined throughput on a temporary topic. Throws a
 * BackendUnavailableError naming the brokers when none answers.
 */
export async function measureKafkaProduceFloor(
  options: KafkaProduceFloorOptions,
): Promise<KafkaProduceFloor> {
  const count = options.count ?? 20_000;
  const inFlight = options.inFlight ?? 256;
  const sequential = options.sequential ?? 2_000;
  const messageBytes = options.messageBytes ?? 100;
  for (const [name, value] of Object.entries({ count, inFlight, sequential, messageBytes })) {
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`measureKafkaProduceFloor: ${name} must be a positive integer, got ${value}`);
    }
  }
  const resolved = resolveKafkaOptions({ brokers: options.brokers, clientId: 'baton-bench-floor' });
  const brokers = resolved.displayBrokers;
  const kafka = createKafkaClient(resolved, undefined);
  const topic = `baton-bench-floor-${randomBytes(6).toString('hex')}`;
  const admin = kafka.admin();
  try {
    await admin.connect();
  } catch (err) {
    await admin.disconnect().catch(() => undefined);
    throw toKafkaError(err, { brokers, operation: 'produce floor: connect' });
  }
  let created = false;
  const producer = new BatchingProducer(kafka, Math.max(resolved.maxMessageBytes, messageBytes));
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: 1, replicationFactor: resolved.replicationFactor }],
    });
    created = true;
    await producer.connect();
    const value = randomBytes(messageBytes);
    const send = (): Promise<number> => producer.send({ topic, partition: 0, key: null, value });
    const total = sequential + count;
    let done = 0;
    const tick = (): void => {
      done++;
      if (done % PROGRESS_EVERY === 0 || done === total) options.onProgress?.(done, total);
    };

    // The first sends fetch metadata and open the leader's connection; they are not measured.
    for (let i = 0; i < WARM_UP; i++) await send();

    const sequentialMs: number[] = [];
    for (let i = 0; i < sequential; i++) {
      const started = performance.now();
      await send();
      sequentialMs.push(performance.now() - started);
      tick();
    }

    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < count) {
        next++;
        await send();
        tick();
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: Math.min(inFlight, count) }, lane));
    const wallMs = performance.now() - started;
    return { sequentialMs, count, inFlight, messageBytes, wallMs, brokers };
  } catch (err) {
    throw toKafkaError(err, { brokers, operation: `produce floor on topic ${topic}` });
  } finally {
    await producer.disconnect().catch(() => undefined);
    await deleteTopic(admin, topic, created);
    await admin.disconnect().catch(() => undefined);
  }
}

/** Deletes the topic if it exists: a creation that timed out may still have made it. */
async function deleteTopic(admin: Admin, topic: string, created: boolean): Promise<void> {
  try {
    if (created || (await admin.listTopics()).includes(topic)) {
      await admin.deleteTopics({ topics: [topic], timeout: 10_000 });
    }
  } catch {
    // Best effort: the measurement's own outcome matters more than a leftover empty topic.
  }
}
