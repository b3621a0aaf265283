/**
 * Durable promises through the worker (memory adapters; the real stores and buses: the system
 * spec promises.int.spec.ts, real processes: crash-promises.serial.int.spec.ts): a run awaiting a
 * promise suspends and is woken by its completion; one paused meanwhile takes it once resumed; one
 * whose worker died takes it on the worker that resumes it; a timeout ends the wait and the late
 * completion is refused; an encrypting fleet keeps the value sealed outside the run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { defineActivity, defineWorkflow, PromiseTimeoutError } from '@baton/core';
import { resolvePayloadProtection } from '@baton/core/runtime';
import { fleet, FAST, Ledger, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

/** The tokens the workflows below handed out, by run: the "email" an approver receives. */
const outbox = new Map<string, string>();
const effects = new Ledger();

const sendLink = defineActivity({
  name: 'pr_send_link',
  run: (token: string, io) => {
    effects.record(io.idempotencyKey);
    outbox.set(io.runId, token);
  },
});
const book = defineActivity({
  name: 'pr_book',
  run: (what: string, io) => (effects.record(io.idempotencyKey), `booked ${what}`),
});

const approval = defineWorkflow({
  name: 'pr_approval',
  version: 1,
  run: async (ctx, input: { item: string; timeout?: string }) => {
    const decision = ctx.promise<{ approved: boolean; by: string }>(
      input.timeout === undefined ? {} : { timeout: input.timeout as '1s' },
    );
    await ctx.run(sendLink, decision.token);
    try {
      const { approved, by } = await decision.value;
      return approved ? `${await ctx.run(book, input.item)} for ${by}` : `refused by ${by}`;
    } catch (err) {
      if (err instanceof PromiseTimeoutError) return 'nobody answered';
      throw err;
    }
  },
});

async function statusOf(f: Fleet, runId: string): Promise<string | undefined> {
  return (await f.client.describe(runId).catch(() => undefined))?.status;
}

async function tokenOf(runId: string): Promise<string> {
  await until(() => outbox.has(runId), 5_000, 'the token handed out');
  return outbox.get(runId)!;
}

describe('durable promises (memory adapters)', () => {
  it('suspends a run awaiting its promise and completes it with the value it is resolved with', async () => {
    const f = (current = fleet({ workflows: [approval] }));
    await f.spawn();
    const run = await f.client.start(approval, { item: 'room 12' });
    const token = await tokenOf(run.runId);
    await until(async () => (await statusOf(f, run.runId)) === 'suspended', 5_000, 'the run suspended');
    expect(await f.client.promises.pending(run.runId)).toEqual([
      expect.objectContaining({ token, seq: 0, state: 'pending' }),
    ]);
    expect(await f.client.promises.resolve(token, { approved: true, by: 'ann' })).toEqual({
      state: 'resolved',
    });
    expect(await run.result({ timeoutMs: 5_000 })).toBe('booked room 12 for ann');
    // A retry of the same completion, even after the run's end, answers as the first; another does not.
    expect(await f.client.promises.resolve(token, { approved: true, by: 'ann' })).toEqual({
      state: 'resolved',
    });
    await expect(f.client.promises.resolve(token, { approved: false, by: 'ann' })).rejects.toThrow(
      /already resolved/,
    );
    expect(effects.count(`${run.runId}:1`)).toBe(1);
    expect(effects.count(`${run.runId}:2`)).toBe(1);
  });

  it('keeps the completion of a paused run for its resume', async () => {
    const f = (current = fleet({ workflows: [approval] }));
    await f.spawn();
    const run = await f.client.start(approval, { item: 'room 13' });
    const token = await tokenOf(run.runId);
    await until(async () => (await statusOf(f, run.runId)) === 'suspended', 5_000, 'the run suspended');
    expect(await f.client.runs.pause(run.runId)).toBe('paused');
    await f.client.promises.resolve(token, { approved: false, by: 'bob' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await statusOf(f, run.runId)).toBe('paused');
    expect(await f.client.runs.resume(run.runId)).toBe(true);
    expect(await run.result({ timeoutMs: 5_000 })).toBe('refused by bob');
  });

  it('delivers a completion made while the run’s worker is dead to the worker that resumes it', async () => {
    // The run holds its lease (an activity in flight beside the wait) when its worker dies; the
    // completion comes while nobody runs it, and the worker that resumes it after the lease
    // expires takes the completion from the inbox.
    let stalls = 1;
    const check = defineActivity({
      name: 'pr_check',
      run: async (_: null, io) => {
        if (stalls-- > 0) await new Promise(() => undefined); // the first attempt never ends
        effects.record(io.idempotencyKey);
        return 'checked';
      },
    });
    const parallel = defineWorkflow({
      name: 'pr_parallel',
      version: 1,
      run: async (ctx) => {
        const decision = ctx.promise<string>();
        await ctx.run(sendLink, decision.token);
        return (await Promise.all([decision.value, ctx.run(check, null)])).join(' and ');
      },
    });
    const f = (current = fleet({ workflows: [parallel] }));
    const first = await f.spawn();
    const run = await f.client.start(parallel, null);
    const token = await tokenOf(run.runId);
    await until(
      async () => (await f.client.describe(run.runId)).lease?.owner === 'w1',
      5_000,
      'w1 holds the run',
    );
    first.crash();
    await f.client.promises.resolve(token, 'approved');
    expect((await f.store.leases.get(run.runId))?.state).toBe('held');
    await f.spawn();
    expect(await run.result({ timeoutMs: 5_000 })).toBe('approved and checked');
    expect(effects.count(`${run.runId}:1`)).toBe(1);
    expect(effects.count(`${run.runId}:2`)).toBe(1);
  });

  it('ends the wait at its timeout, and refuses the completion that comes after', async () => {
    const f = (current = fleet({ workflows: [approval] }));
    await f.spawn({ ...FAST, inProcessWaitMs: 0 });
    const run = await f.client.start(approval, { item: 'room 15', timeout: '300ms' });
    const token = await tokenOf(run.runId);
    expect(await run.result({ timeoutMs: 5_000 })).toBe('nobody answered');
    const late = f.client.promises.resolve(token, { approved: true, by: 'dee' });
    await expect(late).rejects.toThrow(/has finished|timed out/);
    const history = (await f.client.history(run.runId)).map((p) => p.entry.type);
    expect(history).toContain('PromiseTimedOut');
  });

  it('keeps the value sealed in the store when the fleet encrypts', async () => {
    const payloadProtection = resolvePayloadProtection(
      { encryptionKeys: `k1:${randomBytes(32).toString('base64')}` },
      {},
    );
    const f = (current = fleet({ workflows: [approval], payloadProtection }));
    await f.spawn();
    const run = await f.client.start(approval, { item: 'room 16' });
    const token = await tokenOf(run.runId);
    await f.client.promises.resolve(token, { approved: true, by: 'secret-approver' });
    expect(await run.result({ timeoutMs: 5_000 })).toBe('booked room 16 for secret-approver');
    expect(JSON.stringify(await f.store.promises.get(token))).not.toContain('secret-approver');
    expect(JSON.stringify(await f.store.signals.read(run.runId))).not.toContain('secret-approver');
  });
});
