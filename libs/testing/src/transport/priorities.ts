/**
 * Transport conformance, priorities section: a run queue keeps a lane per priority level and its
 * fetch claims by the cycle of PRIORITY_CYCLE (docs/priorities.md): higher levels first when a
 * choice exists, the lowest level with work at least once in every eight claims, a message without
 * a priority in the `normal` lane, and a level outside the three refused.
 *
 * "When a choice exists" needs every lane's messages to be claimable before the first fetch: a
 * partitioned bus reads its topics into a buffer in the background (Kafka), so each test first
 * takes marker messages from every lane (the lanes are then read), enqueues, and lets
 * {@link SETTLE_MS} pass before it fetches. The factory gives each test a fresh transport, whose
 * claim cycle starts at its first slot; the markers are one whole cycle, so it is there again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@baton/core';
import { RUN_PRIORITIES, type RunPriority, type Transport } from '@baton/core/adapter';
import { bytes, text, uniqueId, useFixture } from '../conformance-helpers.js';
import { fetchMessages } from './queue.js';

/** Long enough for a bus that reads in the background to have every enqueued message in hand. */
const SETTLE_MS = 1_500;

/** Claims `count` messages one fetch at a time (max 1), acking each; returns their texts in order. */
async function claimOneByOne(transport: Transport, count: number, withinMs = 20_000): Promise<string[]> {
  const claimed: string[] = [];
  const deadline = Date.now() + withinMs;
  while (claimed.length < count && Date.now() < deadline) {
    const [delivery] = await transport.runQueue.fetch({ max: 1, expiresMs: 1_000 });
    if (delivery === undefined) continue;
    await delivery.ack();
    claimed.push(text(delivery.data));
  }
  return claimed;
}

/** Levels of the markers {@link readEveryLane} sends: every lane, eight in all (one full cycle). */
const MARKERS: readonly RunPriority[] = ['high', 'high', 'high', 'normal', 'normal', 'normal', 'low', 'low'];

/**
 * Puts markers in every lane and takes them all back, so every lane is being read. Eight of them,
 * the length of PRIORITY_CYCLE: a fresh transport's claims then start again at the cycle's first slot.
 */
async function readEveryLane(transport: Transport): Promise<void> {
  for (const [i, priority] of MARKERS.entries()) {
    await transport.runQueue.enqueue(bytes(`marker-${priority}-${i}`), { priority, key: uniqueId('marker') });
  }
  const markers = await fetchMessages(transport, MARKERS.length, 30_000);
  expect(markers).toHaveLength(MARKERS.length);
  for (const priority of RUN_PRIORITIES) {
    expect(markers.some((d) => text(d.data).startsWith(`marker-${priority}-`))).toBe(true);
  }
}

async function enqueueAt(
  transport: Transport,
  priority: RunPriority | undefined,
  names: string[],
): Promise<void> {
  for (const name of names) {
    await transport.runQueue.enqueue(bytes(name), {
      key: uniqueId('run'),
      ...(priority !== undefined && { priority }),
    });
  }
}

const named = (label: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `${label}-${i}`);

/**
 * `withLanes` builds transports with every lane; `withoutLanes`, when the bus's lanes are opt-in, is
 * the suite's transport without them.
 */
export function describePriorityConformance(
  withLanes: () => Promise<Transport> | Transport,
  withoutLanes?: () => Transport,
): void {
  describe('priorities', () => {
    const transport = useFixture(withLanes);

    if (withoutLanes !== undefined) {
      it('without its priority lanes, refuses a start at high or low naming the option, and carries normal as before', async () => {
        const t = withoutLanes();
        for (const priority of ['high', 'low'] as const) {
          const refused = t.runQueue.enqueue(bytes(`refused-${priority}`), {
            priority,
            key: uniqueId('run'),
          });
          await expect(refused).rejects.toThrow(ConfigError);
          await expect(refused).rejects.toThrow(/priority lanes, which are off.*priorityLanes/);
        }
        await t.runQueue.enqueue(bytes('normal-0'), { priority: 'normal', key: uniqueId('run') });
        await t.runQueue.enqueue(bytes('default-0'), { key: uniqueId('run') });
        const claimed = await claimOneByOne(t, 2);
        expect(claimed.sort()).toEqual(['default-0', 'normal-0']);
        expect(await t.runQueue.fetch({ max: 10, expiresMs: 500 })).toEqual([]);
      });
    }

    it('claims higher-priority messages first when more than one level has messages waiting', async () => {
      const t = transport();
      await readEveryLane(t);
      // Enqueued lowest first, so arrival order alone would claim them the other way round.
      await enqueueAt(t, 'low', named('low', 3));
      await enqueueAt(t, 'normal', named('normal', 3));
      await enqueueAt(t, 'high', named('high', 3));
      await sleep(SETTLE_MS);
      const order = await claimOneByOne(t, 9);
      expect(order.map((name) => name.split('-')[0])).toEqual([
        ...Array<string>(3).fill('high'),
        ...Array<string>(3).fill('normal'),
        ...Array<string>(3).fill('low'),
      ]);
    });

    it('does not starve the lowest level under a steady high-priority load: one claim in eight', async () => {
      const t = transport();
      await readEveryLane(t);
      await enqueueAt(t, 'low', named('low', 2));
      await enqueueAt(t, 'high', named('high', 24));
      await sleep(SETTLE_MS);
      const order: string[] = [];
      for (let i = 0; i < 16; i++) {
        const [name] = await claimOneByOne(t, 1);
        if (name === undefined) break;
        order.push(name);
        // Every high claimed is replaced: the high lane never runs dry.
        if (name.startsWith('high')) await enqueueAt(t, 'high', [`high-more-${i}`]);
      }
      expect(order).toHaveLength(16);
      const lows = order.flatMap((name, i) => (name.startsWith('low') ? [i] : []));
      // Each window of eight claims holds one low slot: both lows within 16 claims, the first within 8.
      expect(lows).toHaveLength(2);
      expect(lows[0]).toBeLessThan(8);
      expect(order.filter((name) => name.startsWith('high')).length).toBe(14);
    });

    it('puts a message without a priority in the normal lane', async () => {
      const t = transport();
      await readEveryLane(t);
      await enqueueAt(t, 'low', ['low-0']);
      await enqueueAt(t, undefined, ['default-0']);
      await enqueueAt(t, 'high', ['high-0']);
      await enqueueAt(t, 'normal', ['normal-0']);
      await sleep(SETTLE_MS);
      // The cycle's slots high, high, high, normal: high first, then the normal lane (both messages,
      // in the order the lane gives them: a partitioned bus does not order different keys), low last.
      const order = await claimOneByOne(t, 4);
      expect(order[0]).toBe('high-0');
      expect(order.slice(1, 3).sort()).toEqual(['default-0', 'normal-0']);
      expect(order[3]).toBe('low-0');
    });

    it('counts every level in backlog()', async () => {
      const t = transport();
      if (t.runQueue.backlog === undefined) return;
      await expect.poll(() => t.runQueue.backlog!(5_000), { timeout: 15_000, interval: 250 }).toBe(0);
      await enqueueAt(t, 'high', ['high-0', 'high-1']);
      await enqueueAt(t, undefined, ['default-0']);
      await enqueueAt(t, 'low', ['low-0']);
      await expect.poll(() => t.runQueue.backlog!(5_000), { timeout: 15_000, interval: 250 }).toBe(4);
      const detail = await t.runQueue.backlogDetail?.(5_000);
      expect(detail?.total).toBe(4);
      expect(detail?.parts.reduce((sum, part) => sum + part.pending, 0)).toBe(4);
    });

    it('refuses a priority outside the levels, naming it and the allowed ones, and enqueues nothing', async () => {
      const t = transport();
      const refused = t.runQueue.enqueue(bytes('urgent'), { priority: 'urgent' as RunPriority });
      await expect(refused).rejects.toThrow(ConfigError);
      await expect(refused).rejects.toThrow(/"urgent".*'high', 'normal', 'low'/);
      await expect(
        t.runQueue.enqueue(bytes('two'), { priority: 2 as unknown as RunPriority }),
      ).rejects.toThrow(ConfigError);
      expect(await t.runQueue.fetch({ max: 10, expiresMs: 500 })).toEqual([]);
    });
  });
}
