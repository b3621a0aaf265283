/**
 * Store conformance, rate limits (contracts/rate-limits.ts in @baton/core): at most `limit` grants
 * per window on the store's clock, even for racing callers; a refusal records nothing and says how
 * long to wait, after which a place is free; names and keys are separate windows; a lowered limit
 * holds at once; bad requests refused.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { RateLimitRequest, Store } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';

/** Registers the rate limit tests; `store()` is the test's fresh store. */
export function describeRateLimitConformance(store: () => Store): void {
  describe('rate limits', () => {
    const request = (name: string, limit: number, perMs: number, key = ''): RateLimitRequest => ({
      name,
      key,
      limit,
      perMs,
    });
    const grants = async (req: RateLimitRequest, times: number): Promise<boolean[]> => {
      const answers: boolean[] = [];
      for (let i = 0; i < times; i++) answers.push((await store().rateLimits.take(req)).granted);
      return answers;
    };

    it('grants limit places per window, then refuses with a wait no longer than the window', async () => {
      const name = uniqueId('limit');
      const req = request(name, 3, 60_000);
      expect(await grants(req, 3)).toEqual([true, true, true]);
      const refused = await store().rateLimits.take(req);
      expect(refused.granted).toBe(false);
      expect(refused.waitMs).toBeGreaterThan(50_000);
      expect(refused.waitMs).toBeLessThanOrEqual(60_000);
      // Asking again while refused takes nothing and keeps being refused.
      expect(await grants(req, 3)).toEqual([false, false, false]);
    });

    it('keeps a window per name and per key', async () => {
      const name = uniqueId('limit');
      expect(await grants(request(name, 1, 60_000, 'customer-a'), 2)).toEqual([true, false]);
      expect(await grants(request(name, 1, 60_000, 'customer-b'), 2)).toEqual([true, false]);
      expect(await grants(request(name, 1, 60_000), 2)).toEqual([true, false]);
      // A name that spells another's name and key together is still its own window.
      expect(await grants(request(`${name}:customer-a`, 1, 60_000), 1)).toEqual([true]);
    });

    it('grants exactly limit of many racing callers', async () => {
      const req = request(uniqueId('limit'), 5, 60_000);
      const answers = await Promise.all(Array.from({ length: 24 }, () => store().rateLimits.take(req)));
      expect(answers.filter((a) => a.granted)).toHaveLength(5);
      expect(answers.filter((a) => !a.granted).every((a) => a.waitMs > 0 && a.waitMs <= 60_000)).toBe(true);
    });

    it('grants again once the wait it answered has passed', async () => {
      const req = request(uniqueId('limit'), 2, 400);
      expect(await grants(req, 2)).toEqual([true, true]);
      const refused = await store().rateLimits.take(req);
      expect(refused.granted).toBe(false);
      expect(refused.waitMs).toBeLessThanOrEqual(400);
      // The window slides: waiting what the store said frees a place (waiting longer only helps).
      await sleep(refused.waitMs + 5);
      expect((await store().rateLimits.take(req)).granted).toBe(true);
    });

    it('holds a lowered limit at once against the grants it already made', async () => {
      const name = uniqueId('limit');
      expect(await grants(request(name, 4, 60_000), 4)).toEqual([true, true, true, true]);
      expect((await store().rateLimits.take(request(name, 2, 60_000))).granted).toBe(false);
      expect((await store().rateLimits.take(request(name, 5, 60_000))).granted).toBe(true);
    });

    it('refuses a bad name, key, limit or window, naming what is wrong', async () => {
      const take = (req: Partial<RateLimitRequest>) =>
        store().rateLimits.take({ ...request('ok', 1, 1000), ...req });
      await expect(take({ name: '' })).rejects.toThrow(/rate limit name "" is invalid/);
      await expect(take({ name: 'a|b' })).rejects.toThrow(/is invalid/);
      await expect(take({ key: 'k'.repeat(257) })).rejects.toThrow(/0-256 characters/);
      await expect(take({ limit: 0 })).rejects.toThrow(/limit 0 is not an integer in 1\.\.10000/);
      await expect(take({ limit: 1.5 })).rejects.toThrow(/limit 1.5/);
      await expect(take({ perMs: 0 })).rejects.toThrow(/per 0 ms/);
      await expect(take({ perMs: 86_400_001 })).rejects.toThrow(/one day/);
    });
  });
}
