/**
 * `Delivery.passOn` on a real broker: a record one member cannot use is published again on a
 * partition another member holds and acked here, so the other member gets it (with its delivery
 * count going on) without a rebalance; a member that holds every partition gets it back itself.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Delivery } from '@baton/core/adapter';
import { kafkaTestUrl } from '@baton/testing/servers';
import { createKafkaTransport as kafkaTransport, type KafkaTransport } from './kafka-transport.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const prefixes = testPrefixes(kafkaTestUrl());
afterAll(() => prefixes.cleanUp(), 30_000);

const open: KafkaTransport[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((t) => t.close()));
});

async function member(prefix: string): Promise<KafkaTransport> {
  const transport = kafkaTransport({
    brokers: kafkaTestUrl(),
    prefix,
    partitions: 4,
    sessionTimeoutMs: 3_000,
  });
  open.push(transport);
  await transport.connect();
  return transport;
}

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

async function collect(transport: KafkaTransport, count: number, withinMs: number): Promise<Delivery[]> {
  const deadline = Date.now() + withinMs;
  const got: Delivery[] = [];
  while (got.length < count && Date.now() < deadline) {
    got.push(...(await transport.runQueue.fetch({ max: count - got.length, expiresMs: 300 })));
  }
  return got;
}

describe('kafka passOn', () => {
  it(
    'hands every record to the other member, with its delivery count going on, and no rebalance',
    { timeout: 60_000 },
    async () => {
      const prefix = prefixes.next();
      const a = await member(prefix);
      const b = await member(prefix);
      const deadline = Date.now() + 20_000;
      const held = (t: KafkaTransport): number => t.queueStats().assignedPartitions.length;
      while (Date.now() < deadline && (held(a) === 0 || held(b) === 0 || held(a) + held(b) !== 4)) {
        await Promise.all([
          a.runQueue.fetch({ max: 1, expiresMs: 200 }),
          b.runQueue.fetch({ max: 1, expiresMs: 200 }),
        ]);
      }
      expect(held(a)).toBeGreaterThan(0);
      expect(held(b)).toBeGreaterThan(0);
      const generations = [a.queueStats().generation, b.queueStats().generation];
      // Local records: all on A's partitions, so A receives every one first.
      const labels = Array.from({ length: 12 }, (_, i) => `pass-${i}`);
      for (const label of labels)
        await a.runQueue.enqueue(bytes(label), { key: label, local: true, headers: { h: label } });
      const atA = await collect(a, labels.length, 15_000);
      expect(atA.map((d) => text(d.data)).sort()).toEqual([...labels].sort());
      expect(atA.every((d) => d.deliveryCount === 1)).toBe(true);
      for (const d of atA) await d.passOn!(50);
      const atB = await collect(b, labels.length, 15_000);
      expect(atB.map((d) => text(d.data)).sort()).toEqual([...labels].sort());
      for (const d of atB) {
        expect(d.deliveryCount).toBe(2);
        expect(d.headers).toEqual({ h: text(d.data) }); // the transport's own header is not shown
        await d.ack();
      }
      // Nothing comes back to A: its copies were acked once published.
      expect(await a.runQueue.fetch({ max: 20, expiresMs: 1_000 })).toEqual([]);
      expect([a.queueStats().generation, b.queueStats().generation]).toEqual(generations);
    },
  );

  it('redelivers to a member that holds every partition, as nak does', { timeout: 60_000 }, async () => {
    const a = await member(prefixes.next());
    await a.runQueue.enqueue(bytes('alone'), { key: 'alone' });
    const [first] = await collect(a, 1, 15_000);
    expect(first).toBeDefined();
    await first!.passOn!(0);
    const [again] = await collect(a, 1, 15_000);
    expect(again && text(again.data)).toBe('alone');
    expect(again!.deliveryCount).toBe(2);
    await again!.ack();
  });
});
