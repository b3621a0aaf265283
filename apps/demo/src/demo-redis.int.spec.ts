import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { redisTestUrl } from '@baton/testing/servers';
import { DEMO_REDIS_URL_ENV } from './bus.js';
import { runDemo } from './demo.js';

describe('loan-approval demo with --bus redis', () => {
  it('keeps every invariant with the crash on the Redis transport, and leaves no key behind', async () => {
    const before = process.env[DEMO_REDIS_URL_ENV];
    process.env[DEMO_REDIS_URL_ENV] = redisTestUrl();
    const lines: string[] = [];
    try {
      const runs = 16;
      const summary = await runDemo({
        runs,
        bus: 'redis',
        output: 'plain',
        write: (t) => lines.push(t),
        seed: 1234,
      });
      const failed = summary.invariants.filter((i) => !i.ok).map((i) => `${i.name}: ${i.detail}`);
      expect(failed).toEqual([]);
      expect(summary.completed).toBe(runs);
      expect(summary.ownedAtCrash).toBeGreaterThan(0);
      expect(summary.duplicatedEffects).toBe(0);
      expect(summary.deadLetters).toBe(0);
    } finally {
      if (before === undefined) delete process.env[DEMO_REDIS_URL_ENV];
      else process.env[DEMO_REDIS_URL_ENV] = before;
    }
    const prefix = /prefix (baton-demo-[0-9a-f]+)/.exec(lines.join(''))?.[1];
    expect(prefix).toBeDefined();
    const redis = new Redis(redisTestUrl());
    try {
      expect(await redis.keys(`${prefix}:*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});
