/**
 * Rate limits on memory adapters (real stores: the conformance section): the limit holds across
 * workers, counted per window at the store's grant times, retries included; a run waiting for a place holds no
 * worker slot, whether it waits in process (the slot lent) or suspended; a journaled step asks for
 * no place on replay; a key function that throws fails its run; a cancel ends a waiting run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineRateLimit, defineWorkflow } from '@baton/core';
import type { RateLimitRequest, Store } from '@baton/core/adapter';
import { memoryStore } from '@baton/core/memory';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';
import { withCapability } from './capabilities.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

/** The memory store, with every ask and every grant (at the store's time of it) written down. */
function countingStore(): { make: () => Store; asks: RateLimitRequest[]; grants: number[] } {
  const asks: RateLimitRequest[] = [];
  const grants: number[] = [];
  let last = 0;
  const inner = memoryStore({ clock: () => (last = Date.now()) });
  const make = (): Store =>
    withCapability(inner, 'rateLimits', {
      take: (request: RateLimitRequest) => {
        asks.push(request);
        const answer = inner.rateLimits.take(request);
        // The memory store reads its clock synchronously, last for the grant itself.
        const at = last;
        return answer.then((a) => {
          if (a.granted) grants.push(at);
          return a;
        });
      },
    });
  return { make, asks, grants };
}

/** The most grants inside any window of `perMs` (a grant at t leaves the window at t + perMs). */
function mostPerWindow(grants: readonly number[], perMs: number): number {
  const sorted = [...grants].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1]! < sorted[i]! + perMs) j++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

describe('rate limits', () => {
  it('grants at most limit attempts per window across two workers', async () => {
    const counted = countingStore();
    const calls = defineRateLimit({ name: 'rl_api', limit: 3, per: '300ms' });
    const executions: string[] = [];
    const callApi = defineActivity({
      name: 'rl_call_api',
      rateLimit: calls,
      run: (label: string) => {
        executions.push(label);
        return label;
      },
    });
    const wf = defineWorkflow({
      name: 'rl_fleet',
      version: 1,
      run: async (ctx, label: string) => [
        await ctx.run(callApi, `${label}.1`),
        await ctx.run(callApi, `${label}.2`),
      ],
    });
    const f = (current = fleet(
      { workflows: [wf], concurrency: 10, inProcessWaitMs: 400 },
      undefined,
      counted.make,
    ));
    await f.spawn();
    await f.spawn();
    const handles = await Promise.all(Array.from({ length: 9 }, (_, i) => f.client.start(wf, `r${i}`)));
    for (const handle of handles) await handle.result({ timeoutMs: 20_000 });

    expect(executions).toHaveLength(18);
    // Every execution had its own grant, and no window held more than the limit.
    expect(counted.grants).toHaveLength(18);
    expect(mostPerWindow(counted.grants, 300)).toBe(3);
    // 18 grants at 3 per 300 ms take at least five windows past the first.
    const span = Math.max(...counted.grants) - Math.min(...counted.grants);
    expect(span).toBeGreaterThanOrEqual(1_500);
    // Both workers ran steps.
    const claimedBy = f.workers.map((w) => w.events.filter((e) => e.type === 'run-claimed').length);
    expect(claimedBy.every((n) => n > 0)).toBe(true);
  });

  for (const mode of ['in process, lending its slot', 'suspended'] as const) {
    it(`lets another run progress while a run waits for a place (${mode})`, async () => {
      const counted = countingStore();
      const slow = defineRateLimit({ name: 'rl_slow', limit: 1, per: '1500ms' });
      const order: string[] = [];
      const limited = defineActivity({
        name: 'rl_limited',
        rateLimit: slow,
        run: (label: string) => void order.push(label),
      });
      const free = defineActivity({ name: 'rl_free', run: (label: string) => void order.push(label) });
      const limitedWf = defineWorkflow({
        name: 'rl_limited_wf',
        version: 1,
        run: async (ctx, label: string) => ctx.run(limited, label),
      });
      const freeWf = defineWorkflow({
        name: 'rl_free_wf',
        version: 1,
        run: async (ctx, label: string) => ctx.run(free, label),
      });
      const f = (current = fleet(
        {
          workflows: [limitedWf, freeWf],
          concurrency: 1,
          inProcessWaitMs: mode === 'suspended' ? 0 : 5_000,
        },
        undefined,
        counted.make,
      ));
      const worker = await f.spawn();
      await (await f.client.start(limitedWf, 'first')).result({ timeoutMs: 5_000 });
      const waiting = await f.client.start(limitedWf, 'second');
      await until(() => counted.asks.length === 2, 5_000, 'the second run to be refused');
      // The only slot's run waits for a place: another run is claimed and finishes meanwhile.
      await (await f.client.start(freeWf, 'free')).result({ timeoutMs: 1_000 });
      expect(order).toEqual(['first', 'free']);
      await waiting.result({ timeoutMs: 5_000 });
      expect(order).toEqual(['first', 'free', 'second']);
      expect(counted.grants[1]! - counted.grants[0]!).toBeGreaterThanOrEqual(1_500);
      const suspended = worker.events.filter((e) => e.type === 'run-suspended' && e.runId === waiting.runId);
      expect(suspended.length > 0).toBe(mode === 'suspended');
    });
  }

  it('takes a place for every retry, waiting for it as the store says', async () => {
    const counted = countingStore();
    const limit = defineRateLimit({ name: 'rl_retry', limit: 1, per: '300ms' });
    let attempts = 0;
    const flaky = defineActivity({
      name: 'rl_flaky',
      rateLimit: limit,
      retry: { maxAttempts: 3, initialDelayMs: 1, jitter: false },
      run: () => {
        if (++attempts < 3) throw new Error('try again');
        return attempts;
      },
    });
    const wf = defineWorkflow({
      name: 'rl_retry_wf',
      version: 1,
      run: async (ctx) => ctx.run(flaky, undefined),
    });
    const f = (current = fleet({ workflows: [wf] }, undefined, counted.make));
    await f.spawn();
    expect(await (await f.client.start(wf, undefined)).result({ timeoutMs: 5_000 })).toBe(3);
    expect(counted.grants).toHaveLength(3);
    expect(mostPerWindow(counted.grants, 300)).toBe(1);
    // Each retry was refused once and asked again after the wait, not in a loop.
    expect(counted.asks.length).toBeLessThanOrEqual(6);
  });

  it('asks for no place for a step the journal holds when the run replays', async () => {
    const counted = countingStore();
    const limit = defineRateLimit({ name: 'rl_replay', limit: 10, per: '1s' });
    let executions = 0;
    const step = defineActivity({
      name: 'rl_step',
      rateLimit: limit,
      run: (n: number) => {
        executions++;
        return n;
      },
    });
    const wf = defineWorkflow({
      name: 'rl_replay_wf',
      version: 1,
      run: async (ctx) => {
        const a = await ctx.run(step, 1);
        // Suspends (inProcessWaitMs 0): the run resumes by replaying step 1 from the journal.
        await ctx.sleep('100ms');
        const b = await ctx.run(step, 2);
        return a + b;
      },
    });
    const f = (current = fleet({ workflows: [wf] }, undefined, counted.make));
    const worker = await f.spawn();
    const handle = await f.client.start(wf, undefined);
    expect(await handle.result({ timeoutMs: 5_000 })).toBe(3);
    expect(worker.events.filter((e) => e.type === 'run-suspended')).toHaveLength(1);
    expect(executions).toBe(2);
    expect(counted.asks).toHaveLength(2);
  });

  it('keeps a window per key, and fails the run whose key function throws', async () => {
    const counted = countingStore();
    const perCustomer = defineRateLimit({ name: 'rl_customer', limit: 1, per: '1m' });
    const send = defineActivity({
      name: 'rl_send',
      rateLimit: {
        limit: perCustomer,
        key: (input: { customer?: string }) => {
          if (input.customer === undefined) throw new Error('no customer in the input');
          return input.customer;
        },
      },
      run: (input: { customer?: string }) => input.customer,
    });
    const wf = defineWorkflow({
      name: 'rl_keyed_wf',
      version: 1,
      run: async (ctx, input: { customer?: string }) => ctx.run(send, input),
    });
    const f = (current = fleet({ workflows: [wf] }, undefined, counted.make));
    await f.spawn();
    // Two customers each get their one place a minute at once.
    expect(await (await f.client.start(wf, { customer: 'acme' })).result({ timeoutMs: 5_000 })).toBe('acme');
    expect(await (await f.client.start(wf, { customer: 'zeta' })).result({ timeoutMs: 5_000 })).toBe('zeta');
    expect(counted.asks.map((a) => a.key)).toEqual(['acme', 'zeta']);
    const bad = await f.client.start(wf, {});
    await expect(bad.result({ timeoutMs: 5_000 })).rejects.toThrow(
      /rateLimit.key threw: no customer in the input/,
    );
  });

  it('ends a run cancelled while it waits for a place, without running the step', async () => {
    const counted = countingStore();
    const limit = defineRateLimit({ name: 'rl_cancel', limit: 1, per: '1m' });
    let executions = 0;
    const step = defineActivity({ name: 'rl_cancel_step', rateLimit: limit, run: () => void executions++ });
    const wf = defineWorkflow({
      name: 'rl_cancel_wf',
      version: 1,
      run: async (ctx) => ctx.run(step, undefined),
    });
    const f = (current = fleet({ workflows: [wf] }, undefined, counted.make));
    await f.spawn();
    await (await f.client.start(wf, undefined)).result({ timeoutMs: 5_000 });
    const waiting = await f.client.start(wf, undefined);
    await until(() => counted.asks.length === 2, 5_000, 'the second run to be refused');
    await f.client.cancel(waiting.runId, 'not needed');
    await expect(waiting.result({ timeoutMs: 5_000 })).rejects.toThrow(/cancel/i);
    expect(executions).toBe(1);
  });
});
