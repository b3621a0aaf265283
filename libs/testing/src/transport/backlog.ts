/**
 * Transport conformance, backlog section (optional, like the capability): a transport that counts
 * its run queue's backlog (`backlog`) also details it (`backlogDetail`), and both agree: messages
 * enqueued while nobody fetches are all counted, the detail's total is the sum of its parts, and a
 * closed transport says nothing. What each part means is the adapter's own (its int specs).
 */
import { describe, expect, it } from 'vitest';
import type { Transport } from '@baton/core/adapter';
import { bytes } from '../conformance-helpers.js';

export function describeBacklogConformance(
  transport: () => Transport,
  factory: () => Promise<Transport> | Transport,
): void {
  describe('backlog', () => {
    it('counts by backlog() and backlogDetail() alike, or offers neither', async () => {
      const t = transport();
      if (t.runQueue.backlog === undefined) {
        expect(t.runQueue.backlogDetail).toBeUndefined();
        return;
      }
      expect(typeof t.runQueue.backlogDetail).toBe('function');
      // A fresh bus may not answer at once (a new Kafka topic without a leader yet): undefined.
      await expect.poll(() => t.runQueue.backlog!(5_000), { timeout: 15_000, interval: 250 }).toBe(0);
      for (let i = 0; i < 3; i++)
        await t.runQueue.enqueue(bytes(`backlog-${i}`), { key: `backlog-run-${i}` });

      const detail = await t.runQueue.backlogDetail!(5_000);
      expect(detail?.total).toBe(3);
      expect(detail!.parts.length).toBeGreaterThan(0);
      expect(detail!.parts.reduce((sum, part) => sum + part.pending, 0)).toBe(3);
      for (const part of detail!.parts) {
        expect(part.name).toEqual(expect.any(String));
        expect(Number.isSafeInteger(part.pending) && part.pending >= 0).toBe(true);
      }
      expect(await t.runQueue.backlog(5_000)).toBe(3);
    });

    it('says nothing once closed', async () => {
      const t = await factory();
      await t.connect();
      await t.close();
      expect(await t.runQueue.backlog?.(1_000)).toBeUndefined();
      expect(await t.runQueue.backlogDetail?.(1_000)).toBeUndefined();
    });
  });
}
