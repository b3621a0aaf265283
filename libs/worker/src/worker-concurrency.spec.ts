/**
 * Concurrency per key on memory adapters (real stores: the conformance section; real processes:
 * tests/system/src/crash-concurrency-keys.fleet.int.spec.ts): at most `limit` runs of a key run at once,
 * across workers, in arrival order; other keys are not held up; a crashed holder's run keeps its
 * slot on the worker that resumes it; a run that sleeps gives its slot up; a parked run that is
 * cancelled ends without running; a key function that throws fails its run once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineActivity, defineWorkflow } from '@baton/core';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

/** Runs in flight per key, the most seen at once, and the order runs first started in. */
class Tracker {
  readonly inFlight = new Map<string, number>();
  readonly most = new Map<string, number>();
  readonly started: string[] = [];
  readonly executions = new Map<string, number>();
  enter(key: string, label: string): void {
    const now = (this.inFlight.get(key) ?? 0) + 1;
    this.inFlight.set(key, now);
    this.most.set(key, Math.max(now, this.most.get(key) ?? 0));
    if (!this.started.includes(label)) this.started.push(label);
    this.executions.set(label, (this.executions.get(label) ?? 0) + 1);
  }
  leave(key: string): void {
    this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
  }
}

interface Input {
  customer: string;
  label: string;
  workMs: number;
  sleepMs?: number;
}

function workflows(tracker: Tracker, limit: number) {
  const work = defineActivity({
    name: 'ck_work',
    run: async (input: Input, io) => {
      tracker.enter(input.customer, input.label);
      try {
        await sleep(input.workMs, undefined, { signal: io.signal });
      } finally {
        tracker.leave(input.customer);
      }
      return input.label;
    },
  });
  const perCustomer = defineWorkflow({
    name: 'ck_per_customer',
    version: 1,
    concurrency: { key: (input: Input) => input.customer, limit },
    run: async (ctx, input: Input) => {
      const first = await ctx.run(work, input);
      if (input.sleepMs !== undefined) {
        await ctx.sleep(input.sleepMs);
        await ctx.run(work, { ...input, label: `${input.label}+` });
      }
      return first;
    },
  });
  const badKey = defineWorkflow({
    name: 'ck_bad_key',
    version: 1,
    concurrency: {
      key: (input: { customer?: string }) => {
        if (input.customer === undefined) throw new Error('no customer in the input');
        return input.customer;
      },
      limit: 1,
    },
    run: async () => 'ran',
  });
  return { perCustomer, badKey };
}

const input = (customer: string, label: string, workMs = 60): Input => ({ customer, label, workMs });

describe('concurrency per key', () => {
  it('runs at most limit runs of a key at once across workers, other keys alongside', async () => {
    const tracker = new Tracker();
    const { perCustomer, badKey } = workflows(tracker, 2);
    const f = (current = fleet({ workflows: [perCustomer, badKey], concurrency: 10 }));
    await f.spawn();
    await f.spawn();
    const handles = [];
    for (let i = 0; i < 8; i++) handles.push(await f.client.start(perCustomer, input('acme', `a${i}`)));
    for (let i = 0; i < 3; i++) handles.push(await f.client.start(perCustomer, input('zeta', `z${i}`)));
    for (const handle of handles) await handle.result({ timeoutMs: 20_000 });

    expect(tracker.most.get('acme')).toBe(2);
    expect(tracker.most.get('zeta')).toBe(2);
    expect(new Set(tracker.started.filter((l) => l.startsWith('a')))).toEqual(
      new Set(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7']),
    );
    // Zeta's runs did not wait for acme's line.
    expect(tracker.started.indexOf('z0')).toBeLessThan(tracker.started.indexOf('a7'));
    expect(await f.store.concurrency.state('acme')).toEqual({ holders: [], waiting: [] });
    for (const [label, count] of tracker.executions) expect(count, label).toBe(1);
  });

  it('serves the waiting runs of a key in arrival order', async () => {
    const tracker = new Tracker();
    const { perCustomer, badKey } = workflows(tracker, 1);
    const f = (current = fleet({ workflows: [perCustomer, badKey], concurrency: 10 }));
    await f.spawn();
    const handles = [await f.client.start(perCustomer, input('acme', 'r0', 200))];
    await until(() => tracker.started.includes('r0'), 5_000, 'the first run to start');
    for (let i = 1; i < 6; i++) {
      handles.push(await f.client.start(perCustomer, input('acme', `r${i}`, 20)));
      await until(
        async () => (await f.store.concurrency.state('acme')).waiting.length === i,
        5_000,
        `run ${i} in line`,
      );
    }
    for (const handle of handles) await handle.result({ timeoutMs: 10_000 });
    expect(tracker.started).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
  });

  it("keeps a crashed holder's slot with its run: the worker that resumes it runs it, the limit holds", async () => {
    const tracker = new Tracker();
    const { perCustomer, badKey } = workflows(tracker, 1);
    const f = (current = fleet({ workflows: [perCustomer, badKey] }));
    const doomed = await f.spawn();
    const first = await f.client.start(perCustomer, input('acme', 'first', 400));
    await until(() => tracker.started.includes('first'), 5_000, 'the first run to start');
    const second = await f.client.start(perCustomer, input('acme', 'second'));
    await until(
      async () => (await f.store.concurrency.state('acme')).waiting.length === 1,
      5_000,
      'the second run to wait in line',
    );
    doomed.crash();
    tracker.leave('acme'); // the crashed worker's activity never returns
    await f.spawn();
    expect(await first.result({ timeoutMs: 15_000 })).toBe('first');
    expect(await second.result({ timeoutMs: 15_000 })).toBe('second');
    expect(tracker.most.get('acme')).toBe(1);
    // The second run started only after the first (resumed) one finished its step again.
    expect(tracker.started).toEqual(['first', 'second']);
    expect(tracker.executions.get('first')).toBe(2);
    expect(tracker.executions.get('second')).toBe(1);
  });

  it('a run that sleeps gives its slot up until it wakes', async () => {
    const tracker = new Tracker();
    const { perCustomer, badKey } = workflows(tracker, 1);
    const f = (current = fleet({ workflows: [perCustomer, badKey] }));
    await f.spawn();
    const sleeper = await f.client.start(perCustomer, { ...input('acme', 'sleeper', 20), sleepMs: 400 });
    await until(() => tracker.started.includes('sleeper'), 5_000, 'the sleeper to start');
    const other = await f.client.start(perCustomer, input('acme', 'other', 20));
    expect(await other.result({ timeoutMs: 10_000 })).toBe('other');
    expect(await sleeper.result({ timeoutMs: 10_000 })).toBe('sleeper');
    expect(tracker.started).toEqual(['sleeper', 'other', 'sleeper+']);
    expect(tracker.most.get('acme')).toBe(1);
  });

  it('a run cancelled while it waits in line ends cancelled without running, and the line moves on', async () => {
    const tracker = new Tracker();
    const { perCustomer, badKey } = workflows(tracker, 1);
    const f = (current = fleet({ workflows: [perCustomer, badKey] }));
    await f.spawn();
    const holder = await f.client.start(perCustomer, input('acme', 'holder', 300));
    const doomed = await f.client.start(perCustomer, input('acme', 'doomed'));
    const after = await f.client.start(perCustomer, input('acme', 'after'));
    await until(
      async () => (await f.store.concurrency.state('acme')).waiting.length === 2,
      5_000,
      'two runs waiting in line',
    );
    await f.client.cancel(doomed.runId, 'not needed');
    await expect(doomed.result({ timeoutMs: 10_000 })).rejects.toThrow(/not needed/);
    expect(await holder.result({ timeoutMs: 10_000 })).toBe('holder');
    expect(await after.result({ timeoutMs: 10_000 })).toBe('after');
    expect(tracker.started).toEqual(['holder', 'after']);
  });

  it('fails a run whose key function throws, once, naming the workflow and the error', async () => {
    const tracker = new Tracker();
    const { perCustomer, badKey } = workflows(tracker, 1);
    const f = (current = fleet({ workflows: [perCustomer, badKey] }));
    const worker = await f.spawn();
    const run = await f.client.start(badKey, {});
    await expect(run.result({ timeoutMs: 10_000 })).rejects.toThrow(
      /ck_bad_key@1: concurrency.key threw for run \S+: no customer in the input/,
    );
    expect(worker.events.filter((e) => e.type === 'run-failed')).toHaveLength(1);
  });
});
