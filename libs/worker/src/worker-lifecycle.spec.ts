import { afterEach, describe, expect, it } from 'vitest';
import { CancelledError, defineActivity, defineWorkflow } from '@baton/core';
import { encodeJson, encodeMessage } from '@baton/core/runtime';
import { resolveWorkerOptions, Worker } from './index.js';
import { fleet, Ledger, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const sleepMs = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

describe('worker lifecycle (memory adapters)', () => {
  it('stop() hands every owned run off and the runs finish on another worker', async () => {
    const ledger = new Ledger();
    const slow = defineActivity({
      name: 'slow',
      run: async (x: number, io) => {
        ledger.record(io.idempotencyKey);
        await sleepMs(60, io.signal);
        return x * 2;
      },
    });
    const wf = defineWorkflow({
      name: 'slow4',
      version: 1,
      run: async (ctx, x: number) => {
        for (let i = 0; i < 4; i++) x = await ctx.run(slow, x);
        return x;
      },
    });
    current = fleet({ workflows: [wf] });
    const a = await current.spawn();
    const runs = await Promise.all([1, 2, 3, 4, 5].map((n) => current!.client.start(wf, n)));
    await until(() => a.worker.ownedRuns.length === 5, 5_000, 'worker A to own all runs');
    const b = await current.spawn();
    await a.worker.stop();
    expect(a.worker.state).toBe('stopped');
    expect(a.events.filter((e) => e.type === 'run-handed-off')).toHaveLength(5);

    const results = await Promise.all(runs.map((r) => r.result({ timeoutMs: 5_000 })));
    expect(results).toEqual([16, 32, 48, 64, 80]);
    expect(b.events.filter((e) => e.type === 'run-claimed' && e.reason === 'handoff')).toHaveLength(5);
    // In-flight activities were allowed to finish and were journaled: nothing ran twice.
    expect([...ledger.executions.values()].every((n) => n === 1)).toBe(true);
    expect(ledger.executions.size).toBe(20);
  });

  it('cancel stops a run at its next ctx call and the run ends cancelled', async () => {
    const ledger = new Ledger();
    const step = defineActivity({
      name: 'step',
      run: async (_: null, io) => {
        ledger.record(io.idempotencyKey);
        await sleepMs(300, io.signal);
      },
    });
    const wf = defineWorkflow({
      name: 'cancellable',
      version: 1,
      run: async (ctx) => {
        await ctx.run(step, null);
        await ctx.run(step, null);
        return 'finished';
      },
    });
    current = fleet({ workflows: [wf] });
    await current.spawn();
    const run = await current.client.start(wf, null);
    await until(() => ledger.count(`${run.runId}:0`) === 1, 5_000, 'first step to start');
    await current.client.cancel(run.runId);
    await expect(run.result({ timeoutMs: 5_000 })).rejects.toBeInstanceOf(CancelledError);
    expect(ledger.count(`${run.runId}:1`)).toBe(0);
    expect((await current.client.describe(run.runId)).status).toBe('cancelled');
    const history = await current.client.history(run.runId);
    expect(history.at(-1)?.entry.type).toBe('RunCancelled');
  });

  it('cancels a suspended run: it wakes and ends cancelled', async () => {
    const wf = defineWorkflow({
      name: 'waiter',
      version: 1,
      run: async (ctx) => ctx.waitForSignal('never'),
    });
    current = fleet({ workflows: [wf] });
    await current.spawn();
    const run = await current.client.start(wf, null);
    await until(
      async () => (await current!.store.runs.get(run.runId))?.status === 'suspended',
      5_000,
      'suspension',
    );
    await current.client.cancel(run.runId, 'operator said so');
    await expect(run.result({ timeoutMs: 5_000 })).rejects.toThrow(/cancelled/);
  });

  it('sleep and waitForSignal survive crashes while suspended', async () => {
    const wf = defineWorkflow({
      name: 'patient',
      version: 1,
      run: async (ctx, input: { name: string }) => {
        await ctx.sleep(700);
        const answer = await ctx.waitForSignal<string>('answer');
        return `${input.name}: ${answer}`;
      },
    });
    current = fleet({ workflows: [wf] });
    const a = await current.spawn();
    const run = await current.client.start(wf, { name: 'ada' });
    await until(
      async () => (await current!.store.runs.get(run.runId))?.status === 'suspended',
      5_000,
      'sleep suspension',
    );
    a.crash();
    const b = await current.spawn();
    // The timer wakes the run on B; it then suspends again, waiting for the signal.
    await until(
      () => b.events.some((e) => e.type === 'run-claimed' && e.reason === 'timer'),
      5_000,
      'timer wake on B',
    );
    await until(
      async () => (await current!.store.runs.get(run.runId))?.status === 'suspended',
      5_000,
      'signal suspension',
    );
    b.crash();
    const c = await current.spawn();
    await current.client.signal(run.runId, 'answer', 'yes');
    expect(await run.result({ timeoutMs: 5_000 })).toBe('ada: yes');
    expect(c.events).toContainEqual(expect.objectContaining({ type: 'run-claimed', reason: 'signal' }));
  });

  it('delivers a signal sent before the run waits for it', async () => {
    const wf = defineWorkflow({
      name: 'early',
      version: 1,
      run: async (ctx) => {
        await ctx.sleep(200);
        return ctx.waitForSignal<number>('n');
      },
    });
    current = fleet({ workflows: [wf] });
    await current.spawn({ inProcessWaitMs: 1_000 });
    const run = await current.client.start(wf, null);
    await current.client.signal(run.runId, 'n', 42);
    expect(await run.result({ timeoutMs: 5_000 })).toBe(42);
  });

  it('dead-letters poison messages with a reason and keeps working', async () => {
    const wf = defineWorkflow({ name: 'ok', version: 1, run: async () => 'fine' });
    current = fleet({ workflows: [wf] });
    const w = await current.spawn({ maxMessageBytes: 4_096, missingVersionGraceMs: 0 });
    const { transport } = current;
    await transport.runQueue.enqueue(new TextEncoder().encode('{not json'));
    await transport.runQueue.enqueue(
      encodeMessage({
        kind: 'start',
        runId: 'r-unknown',
        workflow: 'nope',
        version: 3,
        input: null,
        enqueuedAt: 0,
      }),
    );
    await transport.runQueue.enqueue(
      encodeMessage({
        kind: 'start',
        runId: 'r-big',
        workflow: 'ok',
        version: 1,
        input: 'x'.repeat(10_000),
        enqueuedAt: 0,
      }),
    );
    await transport.runQueue.enqueue(
      encodeJson({
        v: 1,
        kind: 'start',
        runId: 'bad id with spaces',
        workflow: 'ok',
        version: 1,
        enqueuedAt: 0,
      }),
    );
    const good = await current.client.start(wf, null);
    expect(await good.result({ timeoutMs: 5_000 })).toBe('fine');

    await until(async () => (await transport.deadLetters.list()).length === 4, 5_000, 'four dead letters');
    const letters = await transport.deadLetters.list();
    expect(letters.map((l) => l.code).sort()).toEqual([
      'too-large',
      'unknown-workflow',
      'unparseable',
      'unparseable',
    ]);
    expect(letters.find((l) => l.code === 'unknown-workflow')?.reason).toMatch(
      /workflow nope@3 is not registered on this worker \(it has: ok@1\)/,
    );
    expect(letters.find((l) => l.code === 'too-large')?.reason).toMatch(/exceeds maxMessageBytes \(4096\)/);
    expect(w.worker.state).toBe('running');
  });

  it('retries a signal for a run that has not started yet, then dead-letters it as unknown-run', async () => {
    const wf = defineWorkflow({ name: 'ok', version: 1, run: async () => 'fine' });
    current = fleet({ workflows: [wf] });
    await current.spawn({ maxDeliveries: 3 });
    await current.client.signal('never-started', 'go', 1);
    await until(
      async () => (await current!.transport.deadLetters.list()).length === 1,
      5_000,
      'the dead letter',
    );
    const [letter] = await current.transport.deadLetters.list();
    expect(letter).toMatchObject({ code: 'unknown-run' });
    expect(letter!.reason).toMatch(/signal message for run never-started, which never started/);
  });

  it('starting twice with one idempotency key yields one run, executed once', async () => {
    const ledger = new Ledger();
    const once = defineActivity({
      name: 'once',
      run: (_: null, io) => (ledger.record(io.idempotencyKey), 'done'),
    });
    const wf = defineWorkflow({ name: 'idem', version: 1, run: async (ctx) => ctx.run(once, null) });
    current = fleet({ workflows: [wf] });
    await current.spawn();
    await current.spawn();
    const [first, second] = await Promise.all([
      current.client.start(wf, 1, { idempotencyKey: 'order-77' }),
      current.client.start(wf, 2, { idempotencyKey: 'order-77' }),
    ]);
    expect(second.runId).toBe(first.runId);
    expect(await first.result({ timeoutMs: 5_000 })).toBe('done');
    const late = await current.client.start(wf, 3, { idempotencyKey: 'order-77' });
    expect(late.runId).toBe(first.runId);
    await new Promise((r) => setTimeout(r, 200));
    expect(ledger.executions.size).toBe(1);
    expect(ledger.count(`${first.runId}:0`)).toBe(1);
    expect((await current.client.describe(first.runId)).input).toBe(1);
  });

  it('rejects bad configuration at construction, naming the option', () => {
    const wf = defineWorkflow({ name: 'x', version: 1, run: async () => 1 });
    const base = { transport: {} as never, store: {} as never, workflows: [wf] };
    expect(() => new Worker({ ...base, leaseMs: 1_000, heartbeatMs: 600 })).toThrow(
      /heartbeatMs \(600\) must be below leaseMs\/2/,
    );
    expect(() => new Worker({ ...base, concurrency: 0 })).toThrow(/concurrency must be a positive integer/);
    expect(() => new Worker({ ...base, workflows: [] })).toThrow(/at least one workflow/);
    const other = defineWorkflow({ name: 'x', version: 1, run: async () => 2 });
    expect(() => new Worker({ ...base, workflows: [wf, other] })).toThrow(
      /workflow x@1 has two different definitions, at workflows\[0\] and workflows\[1\]/,
    );
  });

  it('takes the same definition listed twice as one workflow', () => {
    const wf = defineWorkflow({ name: 'x', version: 1, run: async () => 1 });
    const options = resolveWorkerOptions({ transport: {} as never, store: {} as never, workflows: [wf, wf] });
    expect(options.workflows).toEqual([wf]);
  });
});

describe('activity heartbeats', () => {
  it('reach the worker observers with the step and details', async () => {
    const long = defineActivity({
      name: 'long',
      run: async (_: null, io) => {
        io.heartbeat({ percent: 50 });
        return 'done';
      },
    });
    const wf = defineWorkflow({ name: 'beats', version: 1, run: async (ctx) => ctx.run(long, null) });
    current = fleet({ workflows: [wf] });
    const w = await current.spawn();
    const run = await current.client.start(wf, null);
    await run.result({ timeoutMs: 5_000 });
    expect(w.events).toContainEqual({
      type: 'activity-heartbeat',
      runId: run.runId,
      seq: 0,
      details: { percent: 50 },
    });
  });
});

describe('concurrency', () => {
  it('never executes more than `concurrency` runs at once', async () => {
    let running = 0;
    let peak = 0;
    const slow = defineActivity({
      name: 'slow',
      run: async () => {
        peak = Math.max(peak, ++running);
        await sleepMs(40);
        running--;
      },
    });
    const wf = defineWorkflow({ name: 'busy', version: 1, run: async (ctx) => ctx.run(slow, null) });
    current = fleet({ workflows: [wf] });
    const w = await current.spawn({ concurrency: 2 });
    const runs = await Promise.all(Array.from({ length: 8 }, () => current!.client.start(wf, null)));
    await Promise.all(runs.map((r) => r.result({ timeoutMs: 5_000 })));
    expect(peak).toBe(2);
    expect(w.events.filter((e) => e.type === 'run-completed')).toHaveLength(8);
  });
});
