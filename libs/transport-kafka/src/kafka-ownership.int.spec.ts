/**
 * The run queue with partitionOwnership 'presence': the members a membership lists split the
 * runs topic's partitions without a consumer group. The membership here is a list the test
 * changes (the worker passes its store's presence; the crash-loop spec runs that end to end);
 * the broker is real. Every test has its own prefix (topics and group).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Delivery, RunQueueMembership } from '@baton/core/adapter';
import { kafkaTestUrl } from '@baton/testing/servers';
import { createKafkaTransport as kafkaTransport, type KafkaTransport } from './kafka-transport.js';
import { ownedPartitions } from './partition-ownership.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const prefixes = testPrefixes(kafkaTestUrl());
afterAll(() => prefixes.cleanUp(), 30_000);

const open: KafkaTransport[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((t) => t.close()));
});

const PARTITIONS = 4;

/** A fleet's live members as a store's presence would list them. */
function fleet(): { live: Set<string>; of(id: string): RunQueueMembership } {
  const live = new Set<string>();
  return {
    live,
    of: (memberId) => ({ memberId, members: async () => [...live] }),
  };
}

async function member(prefix: string, membership: RunQueueMembership): Promise<KafkaTransport> {
  const transport = kafkaTransport({
    brokers: kafkaTestUrl(),
    prefix,
    partitions: PARTITIONS,
    ownershipRefreshMs: 100,
  });
  open.push(transport);
  await transport.connect();
  transport.runQueue.share(membership);
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

describe('kafka run queue, partitions owned by presence', () => {
  it(
    'splits the partitions among the live members as every member computes it, without a consumer group',
    { timeout: 60_000 },
    async () => {
      const prefix = prefixes.next();
      const members = fleet();
      members.live.add('w-a').add('w-b');
      const a = await member(prefix, members.of('w-a'));
      const b = await member(prefix, members.of('w-b'));
      for (let i = 0; i < 40; i++) await a.runQueue.enqueue(bytes(`r${i}`), { key: `run-${i}` });
      const [fromA, fromB] = await Promise.all([collect(a, 40, 3_000), collect(b, 40, 3_000)]);
      expect(a.queueStats().assignedPartitions).toEqual(ownedPartitions('w-a', ['w-a', 'w-b'], PARTITIONS));
      expect(b.queueStats().assignedPartitions).toEqual(ownedPartitions('w-b', ['w-a', 'w-b'], PARTITIONS));
      // Every record once, from the member that owns its partition.
      expect([...fromA, ...fromB].map((d) => text(d.data)).sort()).toEqual(
        Array.from({ length: 40 }, (_, i) => `r${i}`).sort(),
      );
      for (const d of [...fromA, ...fromB]) await d.ack();
      // Positions went to the group's offsets: the lag (and KEDA's trigger) sees them.
      await expect.poll(() => a.runQueue.backlog(5_000), { timeout: 15_000, interval: 250 }).toBe(0);
    },
  );

  it(
    "moves a dead member's partitions to the others once presence drops it: its un-acked records come again, its acked ones never",
    { timeout: 60_000 },
    async () => {
      const prefix = prefixes.next();
      const members = fleet();
      members.live.add('w-a').add('w-b');
      const a = await member(prefix, members.of('w-a'));
      const b = await member(prefix, members.of('w-b'));
      for (let i = 0; i < 40; i++) await a.runQueue.enqueue(bytes(`r${i}`), { key: `run-${i}` });
      const [fromA, fromB] = await Promise.all([collect(a, 40, 3_000), collect(b, 40, 3_000)]);
      expect(fromA.length).toBeGreaterThan(1);
      // a acks half of what it took and dies with the rest in hand.
      const ackedByA = fromA.slice(0, Math.floor(fromA.length / 2));
      for (const d of ackedByA) await d.ack();
      for (const d of fromB) await d.ack();
      await expect
        .poll(() => a.runQueue.backlog(5_000), { timeout: 15_000, interval: 250 })
        .toBe(fromA.length - ackedByA.length);
      const moved = Date.now();
      await a.close();
      members.live.delete('w-a');
      const again = await collect(b, fromA.length - ackedByA.length, 10_000);
      console.log(
        `[kafka ownership] a dead member's un-acked records reached the survivor after ${Date.now() - moved} ms`,
      );
      expect(b.queueStats().assignedPartitions).toEqual([0, 1, 2, 3]);
      expect(again.map((d) => text(d.data)).sort()).toEqual(
        fromA
          .slice(ackedByA.length)
          .map((d) => text(d.data))
          .sort(),
      );
      for (const d of again) await d.ack();
      await expect.poll(() => b.runQueue.backlog(5_000), { timeout: 15_000, interval: 250 }).toBe(0);
      // Nothing more: the acked ones stay acked.
      expect(await collect(b, 1, 1_500)).toEqual([]);
    },
  );

  it(
    'lets a joining member take only the partitions it wins, the others reading on without a pause',
    { timeout: 60_000 },
    async () => {
      const prefix = prefixes.next();
      const members = fleet();
      members.live.add('w-a');
      const a = await member(prefix, members.of('w-a'));
      await collect(a, 1, 500); // starts reading: a holds every partition
      await expect.poll(() => a.queueStats().assignedPartitions).toEqual([0, 1, 2, 3]);
      members.live.add('w-c');
      const c = await member(prefix, members.of('w-c'));
      await collect(c, 1, 500);
      const aOwns = ownedPartitions('w-a', ['w-a', 'w-c'], PARTITIONS);
      await expect.poll(() => a.queueStats().assignedPartitions).toEqual(aOwns);
      expect(c.queueStats().assignedPartitions).toEqual(ownedPartitions('w-c', ['w-a', 'w-c'], PARTITIONS));
      // Records on a's partitions reach a, the others c; nobody waited for a rebalance.
      for (let i = 0; i < 20; i++) await a.runQueue.enqueue(bytes(`j${i}`), { key: `join-${i}` });
      const [fromA, fromC] = await Promise.all([collect(a, 20, 3_000), collect(c, 20, 3_000)]);
      expect(fromA.length + fromC.length).toBe(20);
      expect(a.queueStats().generation).toBe(2); // its start, then the join: no other change
    },
  );
});
