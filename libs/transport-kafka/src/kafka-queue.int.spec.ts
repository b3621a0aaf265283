/**
 * What the conformance suite cannot see on Kafka: commits only after ack across members, pausing
 * at the buffer limit, rebalances with deliveries in flight, local routing of reaper messages.
 * Real broker; every test has its own prefix (topics and group).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Delivery } from '@baton/core/adapter';
import { kafkaTestUrl } from '@baton/testing/servers';
import { layoutFor, partitionForKey, type KafkaTransportOptions } from './index.js';
import { createKafkaTransport as kafkaTransport, type KafkaTransport } from './kafka-transport.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const prefixes = testPrefixes(kafkaTestUrl());
afterAll(() => prefixes.cleanUp(), 30_000);

const open: KafkaTransport[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((t) => t.close()));
});

async function member(prefix: string, options: KafkaTransportOptions = {}): Promise<KafkaTransport> {
  const transport = kafkaTransport({
    brokers: kafkaTestUrl(),
    prefix,
    partitions: 4,
    sessionTimeoutMs: 3_000,
    ...options,
  });
  open.push(transport);
  await transport.connect();
  return transport;
}

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

/** Fetches until `count` deliveries arrived or `withinMs` passed. */
async function collect(transport: KafkaTransport, count: number, withinMs: number): Promise<Delivery[]> {
  const deadline = Date.now() + withinMs;
  const got: Delivery[] = [];
  while (got.length < count && Date.now() < deadline) {
    got.push(...(await transport.runQueue.fetch({ max: count - got.length, expiresMs: 500 })));
  }
  return got;
}

describe('kafka run queue', () => {
  it(
    "reports the workers' group lag as its backlog: every record until its offset is committed",
    { timeout: 60_000 },
    async () => {
      const prefix = prefixes.next();
      const a = await member(prefix);
      expect(await a.runQueue.backlog(5_000)).toBe(0);
      for (let i = 0; i < 6; i++) await a.runQueue.enqueue(bytes(`lag${i}`), { key: `run-${i}` });
      // No member has read anything: the group has no offsets, and reads from the beginning.
      expect(await a.runQueue.backlog(5_000)).toBe(6);
      const got = await collect(a, 6, 20_000);
      expect(got).toHaveLength(6);
      for (const d of got) await d.ack();
      await expect.poll(() => a.runQueue.backlog(5_000), { timeout: 15_000, interval: 250 }).toBe(0);
      await a.close();
      expect(await a.runQueue.backlog(5_000)).toBeUndefined();
    },
  );

  it(
    'details the lag per partition of the runs topic, for records enqueued while nobody fetches',
    { timeout: 60_000 },
    async () => {
      const prefix = prefixes.next();
      const a = await member(prefix);
      const topic = layoutFor(prefix).runsTopic;
      const empty = [0, 1, 2, 3].map((partition) => ({
        name: `${topic}/${partition}`,
        partition,
        pending: 0,
      }));
      // Right after the topics are created a partition may have no leader yet: the bus cannot say
      // (undefined) until it has.
      await expect
        .poll(() => a.runQueue.backlogDetail(5_000), { timeout: 15_000, interval: 250 })
        .toEqual({ total: 0, parts: empty });
      const keys = ['run-a', 'run-b', 'run-c', 'run-d', 'run-e', 'run-f', 'run-g'];
      const expected = [0, 0, 0, 0];
      for (const key of keys) {
        await a.runQueue.enqueue(bytes(key), { key });
        expected[partitionForKey(key, 4)]! += 1;
      }
      // Keys spread over more than one partition, so the parts are really per partition.
      expect(expected.filter((n) => n > 0).length).toBeGreaterThan(1);
      expect(await a.runQueue.backlogDetail(5_000)).toEqual({
        total: keys.length,
        parts: expected.map((pending, partition) => ({ name: `${topic}/${partition}`, partition, pending })),
      });
      expect(await a.runQueue.backlog(5_000)).toBe(keys.length);
      await a.close();
      expect(await a.runQueue.backlogDetail(5_000)).toBeUndefined();
    },
  );

  it(
    'hands un-acked records to the next member after one leaves, and never the acked ones',
    { timeout: 60_000 },
    async () => {
      const prefix = prefixes.next();
      const a = await member(prefix);
      for (let i = 0; i < 8; i++) await a.runQueue.enqueue(bytes(`m${i}`), { key: `run-${i}` });
      const first = await collect(a, 8, 20_000);
      expect(first).toHaveLength(8);
      const acked = first.slice(0, 4);
      for (const d of acked) await d.ack();
      await a.close();

      const b = await member(prefix);
      const second = await collect(b, 4, 20_000);
      expect(second.map((d) => text(d.data)).sort()).toEqual(
        first
          .slice(4)
          .map((d) => text(d.data))
          .sort(),
      );
      for (const d of second) await d.ack();
      expect(await b.runQueue.fetch({ max: 10, expiresMs: 1_000 })).toEqual([]);
    },
  );

  it(
    'pauses its partitions when the buffer is full and loses nothing when it resumes',
    { timeout: 60_000 },
    async () => {
      const prefix = prefixes.next();
      const t = await member(prefix, { maxBufferedMessages: 5 });
      const labels = Array.from({ length: 40 }, (_, i) => `p${i}`);
      await Promise.all(labels.map((l) => t.runQueue.enqueue(bytes(l), { key: l })));
      // Start consuming, take nothing for a while: the buffer must stop at its limit.
      expect(await t.runQueue.fetch({ max: 1, expiresMs: 10_000 })).toHaveLength(1);
      const received: string[] = [];
      await new Promise((r) => setTimeout(r, 1_500));
      const stats = t.queueStats();
      expect(stats.buffered).toBeLessThanOrEqual(5);
      expect(stats.paused).toBe(true);
      const rest = await collect(t, labels.length - 1, 30_000);
      for (const d of rest) {
        received.push(text(d.data));
        await d.ack();
      }
      expect(received.length).toBe(labels.length - 1);
      expect(t.queueStats().paused).toBe(false);
    },
  );

  it(
    'delivers again, after a rebalance, what was in flight on a partition that moved',
    { timeout: 60_000 },
    async () => {
      const prefix = prefixes.next();
      const a = await member(prefix);
      const labels = Array.from({ length: 12 }, (_, i) => `r${i}`);
      for (const l of labels) await a.runQueue.enqueue(bytes(l), { key: l });
      const inFlight = await collect(a, labels.length, 20_000);
      expect(inFlight).toHaveLength(labels.length);
      const generation = a.queueStats().generation;

      const b = await member(prefix);
      const fromB: Delivery[] = [];
      // B's join forces a rebalance: A keeps some partitions, B takes the others.
      const deadline = Date.now() + 20_000;
      while (
        Date.now() < deadline &&
        (a.queueStats().generation === generation || b.queueStats().assignedPartitions.length === 0)
      ) {
        fromB.push(...(await b.runQueue.fetch({ max: 20, expiresMs: 300 })));
      }
      expect(b.queueStats().assignedPartitions.length).toBeGreaterThan(0);
      // Acks of A's pre-rebalance deliveries commit nothing: everything comes again to its owner.
      for (const d of inFlight) await d.ack();
      const fromA = await collect(a, labels.length, 3_000);
      fromB.push(...(await collect(b, labels.length - fromA.length - fromB.length, 15_000)));
      const again = [...fromA, ...fromB].map((d) => text(d.data)).sort();
      expect(again).toEqual([...labels].sort());
      const aPartitions = new Set(a.queueStats().assignedPartitions);
      const bPartitions = new Set(b.queueStats().assignedPartitions);
      expect([...aPartitions].some((p) => bPartitions.has(p))).toBe(false);
    },
  );

  it('puts a local message on a partition of the sender, whatever its key', { timeout: 60_000 }, async () => {
    const prefix = prefixes.next();
    const a = await member(prefix);
    const b = await member(prefix);
    // Both members joined and hold partitions.
    const deadline = Date.now() + 20_000;
    while (
      Date.now() < deadline &&
      (a.queueStats().assignedPartitions.length === 0 ||
        b.queueStats().assignedPartitions.length === 0 ||
        a.queueStats().assignedPartitions.length + b.queueStats().assignedPartitions.length !== 4)
    ) {
      await Promise.all([
        a.runQueue.fetch({ max: 1, expiresMs: 200 }),
        b.runQueue.fetch({ max: 1, expiresMs: 200 }),
      ]);
    }
    expect(a.queueStats().assignedPartitions.length).toBeGreaterThan(0);
    const keys = Array.from({ length: 20 }, (_, i) => `local-${i}`);
    for (const key of keys) await a.runQueue.enqueue(bytes(key), { key, local: true });
    const got = await collect(a, keys.length, 15_000);
    for (const d of got) await d.ack();
    expect(got.map((d) => text(d.data)).sort()).toEqual([...keys].sort());
    expect(await b.runQueue.fetch({ max: 20, expiresMs: 1_000 })).toEqual([]);
  });
});

describe('kafka transport errors', () => {
  it('refuses a run message above maxMessageBytes before sending it', async () => {
    const t = await member(prefixes.next(), { maxMessageBytes: 1_000 });
    await expect(t.runQueue.enqueue(new Uint8Array(2_000))).rejects.toMatchObject({
      code: 'BATON_TOO_LARGE',
    });
    await expect(t.journal.append({ runId: 'big', data: new Uint8Array(2_000) })).rejects.toMatchObject({
      code: 'BATON_TOO_LARGE',
    });
  });

  it('names the broker when none answers', { timeout: 20_000 }, async () => {
    const t = kafkaTransport({ brokers: 'kafka://127.0.0.1:1', connectionTimeoutMs: 500 });
    open.push(t);
    await expect(t.connect()).rejects.toMatchObject({
      code: 'BATON_KAFKA_UNAVAILABLE',
      message: expect.stringContaining('127.0.0.1:1') as unknown as string,
    });
  });
});
