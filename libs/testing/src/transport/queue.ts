/**
 * Transport conformance, RunQueue section: enqueue, fetch, ack, nak, redelivery, de-duplication.
 */
import { describe, expect, it } from 'vitest';
import type { Delivery, Transport } from '@baton/core/adapter';
import { setTimeout as sleep } from 'node:timers/promises';
import { bytes, text, uniqueId } from '../conformance-helpers.js';

/**
 * Fetches until `count` messages arrived or `withinMs` passed, acking each unless told not to.
 * Real transports may split a batch, so tests never rely on one fetch returning everything.
 */
export async function fetchMessages(
  transport: Transport,
  count: number,
  withinMs: number,
  options: { ack?: boolean; max?: number } = {},
): Promise<Delivery[]> {
  const deadline = Date.now() + withinMs;
  const received: Delivery[] = [];
  while (received.length < count) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    const max = Math.min(options.max ?? count, count - received.length);
    const batch = await transport.runQueue.fetch({ max, expiresMs: Math.min(remaining, 1_000) });
    for (const delivery of batch) {
      if (options.ack ?? true) await delivery.ack();
      received.push(delivery);
    }
  }
  return received;
}

/** Registers the run-queue tests; `ackWaitMs` is the ack wait the factory configured. */
export function describeQueueConformance(transport: () => Transport, ackWaitMs: number): void {
  /** Long enough for any redelivery the test expects to have happened. */
  const redeliveryWithinMs = ackWaitMs * 3 + 2_000;

  describe('run queue', () => {
    it('delivers an enqueued message once, with its data, headers and a delivery count of 1', async () => {
      const headers = {
        'baton-kind': 'start',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      };
      await transport().runQueue.enqueue(bytes('start run-1'), { headers, key: uniqueId('run') });
      const [delivery, ...rest] = await fetchMessages(transport(), 1, 5_000);
      expect(rest).toEqual([]);
      expect(text(delivery?.data ?? new Uint8Array())).toBe('start run-1');
      expect(delivery?.headers).toMatchObject(headers);
      expect(delivery?.deliveryCount).toBe(1);
    });

    it('does not redeliver an acked message', async () => {
      await transport().runQueue.enqueue(bytes('once'));
      expect(await fetchMessages(transport(), 1, 5_000)).toHaveLength(1);
      await sleep(ackWaitMs + 200);
      expect(await transport().runQueue.fetch({ max: 10, expiresMs: ackWaitMs })).toEqual([]);
    });

    it('returns an empty batch when nothing arrives before expiresMs', async () => {
      expect(await transport().runQueue.fetch({ max: 5, expiresMs: 200 })).toEqual([]);
    });

    it('hands a message enqueued during a fetch to the waiting fetcher', async () => {
      const fetching = transport().runQueue.fetch({ max: 1, expiresMs: 5_000 });
      await sleep(50);
      await transport().runQueue.enqueue(bytes('late'));
      const batch = await fetching;
      expect(batch.map((d) => text(d.data))).toEqual(['late']);
      await batch[0]?.ack();
    });

    it('returns from a fetch when its signal aborts', { timeout: 4_000 }, async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      expect(
        await transport().runQueue.fetch({ max: 1, expiresMs: 15_000, signal: controller.signal }),
      ).toEqual([]);
    });

    it('returns at most `max` messages per fetch', async () => {
      for (const label of ['a', 'b', 'c']) await transport().runQueue.enqueue(bytes(label));
      const batch = await transport().runQueue.fetch({ max: 2, expiresMs: 2_000 });
      expect(batch.length).toBeGreaterThanOrEqual(1);
      expect(batch.length).toBeLessThanOrEqual(2);
      for (const delivery of batch) await delivery.ack();
      const rest = await fetchMessages(transport(), 3 - batch.length, 5_000);
      expect([...batch, ...rest].map((d) => text(d.data)).sort()).toEqual(['a', 'b', 'c']);
    });

    it('keeps the order of messages with the same key', async () => {
      const key = uniqueId('run');
      const labels = ['first', 'second', 'third', 'fourth'];
      for (const label of labels) await transport().runQueue.enqueue(bytes(label), { key });
      const received = await fetchMessages(transport(), labels.length, 5_000, { max: 1 });
      expect(received.map((d) => text(d.data))).toEqual(labels);
    });

    it('gives competing consumers disjoint messages', async () => {
      const labels = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6'];
      const consumers = Promise.all([
        transport().runQueue.fetch({ max: 3, expiresMs: 2_000 }),
        transport().runQueue.fetch({ max: 3, expiresMs: 2_000 }),
      ]);
      for (const label of labels) await transport().runQueue.enqueue(bytes(label), { key: uniqueId(label) });
      const [a, b] = await consumers;
      const batches = [...a, ...b];
      for (const delivery of batches) await delivery.ack();
      const rest = await fetchMessages(transport(), labels.length - batches.length, 5_000);
      const all = [...batches, ...rest].map((d) => text(d.data));
      expect(all.sort()).toEqual(labels);
      expect([...batches, ...rest].every((d) => d.deliveryCount === 1)).toBe(true);
    });

    it('redelivers a message nobody acked after the ack wait, counting the delivery', async () => {
      await transport().runQueue.enqueue(bytes('crashed consumer'));
      const [first] = await fetchMessages(transport(), 1, 5_000, { ack: false });
      expect(first?.deliveryCount).toBe(1);
      const [second] = await fetchMessages(transport(), 1, redeliveryWithinMs);
      expect(text(second?.data ?? new Uint8Array())).toBe('crashed consumer');
      expect(second?.deliveryCount).toBe(2);
      await sleep(ackWaitMs + 200);
      expect(await transport().runQueue.fetch({ max: 1, expiresMs: ackWaitMs })).toEqual([]);
    });

    it('redelivers a nakked message at once', async () => {
      await transport().runQueue.enqueue(bytes('retry me'));
      const [first] = await fetchMessages(transport(), 1, 5_000, { ack: false });
      await first?.nak();
      const [second] = await fetchMessages(transport(), 1, 5_000);
      expect(text(second?.data ?? new Uint8Array())).toBe('retry me');
      expect(second?.deliveryCount).toBe(2);
    });

    it('holds a message nakked with a delay back until the delay has passed', async () => {
      await transport().runQueue.enqueue(bytes('later'));
      const [first] = await fetchMessages(transport(), 1, 5_000, { ack: false });
      await first?.nak(500);
      expect(await transport().runQueue.fetch({ max: 1, expiresMs: 100 })).toEqual([]);
      const [second] = await fetchMessages(transport(), 1, redeliveryWithinMs);
      expect(text(second?.data ?? new Uint8Array())).toBe('later');
      expect(second?.deliveryCount).toBe(2);
    });

    it('drops a second enqueue with the same msgId', async () => {
      const msgId = uniqueId('msg');
      await transport().runQueue.enqueue(bytes('original'), { msgId });
      await transport().runQueue.enqueue(bytes('duplicate'), { msgId });
      await transport().runQueue.enqueue(bytes('distinct'), { msgId: uniqueId('msg') });
      const received = await fetchMessages(transport(), 2, 5_000);
      expect(received.map((d) => text(d.data)).sort()).toEqual(['distinct', 'original']);
      expect(await transport().runQueue.fetch({ max: 5, expiresMs: 300 })).toEqual([]);
    });

    it('keeps the enqueued bytes even if the caller reuses its buffer', async () => {
      const buffer = bytes('intact');
      await transport().runQueue.enqueue(buffer);
      buffer.fill(0);
      const [delivery] = await fetchMessages(transport(), 1, 5_000);
      expect(text(delivery?.data ?? new Uint8Array())).toBe('intact');
    });
  });
}
