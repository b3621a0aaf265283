/**
 * The producer's session policy, against a stand-in for kafkajs's producer (the real one cannot be
 * made to give this answer on demand; the Kafka cluster spec meets it under a broker SIGKILL): an
 * answer that leaves a partition out rejects that partition's records and ends the session, so the
 * next batch does not reuse sequence numbers kafkajs rewound for a request that may have been
 * stored.
 */
import { describe, expect, it } from 'vitest';
import type { Kafka, ProducerBatch, RecordMetadata } from 'kafkajs';
import { BatchingProducer } from './producer.js';

interface FakeSession {
  id: number;
  batches: ProducerBatch[];
}

/** A Kafka client whose producers answer each batch with `answer(session, batch)`. */
function fakeKafka(answer: (session: FakeSession, batch: ProducerBatch) => RecordMetadata[]) {
  const sessions: FakeSession[] = [];
  const kafka = {
    producer() {
      const session: FakeSession = { id: sessions.length + 1, batches: [] };
      sessions.push(session);
      return {
        connect: () => Promise.resolve(),
        disconnect: () => Promise.resolve(),
        sendBatch(batch: ProducerBatch) {
          session.batches.push(batch);
          return Promise.resolve(answer(session, batch));
        },
      };
    },
  } as unknown as Kafka;
  return { kafka, sessions };
}

/**
 * A broker's answer: every partition of the batch answered with its log's end as base offset (each
 * partition's log starts at 100 × (partition + 1)); the batch's records are appended.
 */
function brokerAnswers(): (session: FakeSession, batch: ProducerBatch) => RecordMetadata[] {
  const ends = new Map<number, number>();
  return (_session, batch) => {
    const counts = new Map<number, number>();
    for (const { messages } of batch.topicMessages ?? []) {
      for (const m of messages) counts.set(m.partition!, (counts.get(m.partition!) ?? 0) + 1);
    }
    return [...counts].map(([partition, count]) => {
      const base = ends.get(partition) ?? 100 * (partition + 1);
      ends.set(partition, base + count);
      return { topicName: 't', partition, errorCode: 0, baseOffset: String(base) };
    });
  };
}

const record = (partition: number, value: string) => ({
  topic: 't',
  partition,
  key: `k${partition}`,
  value: Buffer.from(value),
});

describe('BatchingProducer', () => {
  it('resolves each record with its own offset, consecutive within a partition', async () => {
    const { kafka, sessions } = fakeKafka(brokerAnswers());
    const producer = new BatchingProducer(kafka, 1_000_000);
    await producer.connect();
    // The first goes out alone; the next two are batched while it is in flight.
    const offsets = await Promise.all([
      producer.send(record(0, 'a')),
      producer.send(record(1, 'b')),
      producer.send(record(0, 'c')),
    ]);
    expect(offsets).toEqual([100, 200, 101]);
    expect(producer.ackedEnd('t', 0)).toBe(102);
    expect(sessions.map((s) => s.batches.length)).toEqual([2]);
  });

  it('rejects the records of a partition the answer left out, and sends the next batch through a new session', async () => {
    const broker = brokerAnswers();
    let leftOut = false;
    const { kafka, sessions } = fakeKafka((session, batch) => {
      const answer = broker(session, batch);
      if (leftOut || !answer.some((m) => m.partition === 1)) return answer;
      leftOut = true;
      // What kafkajs resolves with when partition 1's leadership moved to a broker that had
      // already answered for partition 0: partition 1's records were never sent again.
      return answer.filter((m) => m.partition !== 1);
    });
    const producer = new BatchingProducer(kafka, 1_000_000);
    await producer.connect();
    const [a, b, c] = await Promise.allSettled([
      producer.send(record(0, 'a')),
      producer.send(record(1, 'b')),
      producer.send(record(0, 'c')),
    ]);
    expect([a, c]).toEqual([
      { status: 'fulfilled', value: 100 },
      { status: 'fulfilled', value: 101 },
    ]);
    expect(b.status).toBe('rejected');
    expect(String((b as PromiseRejectedResult).reason)).toContain('no offset for t/1');
    // The next record (as a retry of b would be) goes out through a second producer session.
    expect(await producer.send(record(1, 'b'))).toBe(201);
    expect(sessions.map((s) => s.batches.length)).toEqual([2, 1]);
  });

  it('keeps its session while every partition is answered', async () => {
    const { kafka, sessions } = fakeKafka(brokerAnswers());
    const producer = new BatchingProducer(kafka, 1_000_000);
    await producer.connect();
    for (let i = 0; i < 3; i++) await producer.send(record(i % 2, `r${i}`));
    expect(sessions.map((s) => s.batches.length)).toEqual([3]);
  });
});
