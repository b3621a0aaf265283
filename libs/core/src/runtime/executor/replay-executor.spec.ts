import { describe, expect, it } from 'vitest';
import { NonRetryableError } from '../../author/errors.js';
import { NonDeterminismError } from '../errors.js';
import type { JournalEntry } from '../../shared/journal.js';
import { defineActivity, defineWorkflow, type ActivityIO } from '../../author/workflow.js';
import { execute, testHost } from './test-host.spec-helper.js';

const types = (journal: JournalEntry[]): string[] =>
  journal.map((e) => ('seq' in e ? `${e.type}#${e.seq}` : e.type));

describe('replay executor', () => {
  it('returns journaled results on replay and never re-runs a completed activity', async () => {
    let executions = 0;
    const inc = defineActivity({ name: 'inc', run: (x: number) => (executions++, x + 1) });
    const wf = defineWorkflow({
      name: 'chain',
      version: 1,
      run: async (ctx, x: number) => {
        for (let i = 0; i < 3; i++) x = await ctx.run(inc, x);
        return x;
      },
    });
    const first = await execute(wf, 0);
    expect(first.outcome).toEqual({ kind: 'completed', result: 3 });
    expect(executions).toBe(3);

    const replay = await execute(wf, 0, first.journal);
    expect(replay.outcome).toEqual({ kind: 'completed', result: 3 });
    expect(executions).toBe(3);
    expect(replay.host.journal).toEqual([]);
  });

  it('runs a fan-out of 50 activities on the run signal without a listener-leak warning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const slow = defineActivity({ name: 'slow', run: async (x: number) => (await gate, x) });
      const wf = defineWorkflow({
        name: 'fan',
        version: 1,
        run: async (ctx) => {
          const parts = await Promise.all(Array.from({ length: 50 }, (_, i) => ctx.run(slow, i)));
          return parts.reduce((a, b) => a + b, 0);
        },
      });
      const running = execute(wf, null);
      setTimeout(release, 20);
      expect((await running).outcome).toEqual({ kind: 'completed', result: 1225 });
      // Node reports the warning on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.includes('MaxListenersExceeded'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('resumes at the first unfinished activity', async () => {
    const calls: number[] = [];
    const inc = defineActivity({ name: 'inc', run: (x: number) => (calls.push(x), x + 1) });
    const wf = defineWorkflow({
      name: 'chain',
      version: 1,
      run: async (ctx, x: number) => {
        for (let i = 0; i < 4; i++) x = await ctx.run(inc, x);
        return x;
      },
    });
    const full = await execute(wf, 0);
    const prefix = full.journal.slice(0, 2); // steps #0 and #1 completed before the "crash"
    calls.length = 0;
    const resumed = await execute(wf, 0, prefix);
    expect(resumed.outcome).toEqual({ kind: 'completed', result: 4 });
    expect(calls).toEqual([2, 3]);
  });

  it('fails with NonDeterminismError naming the step and both names when the code changed', async () => {
    const a = defineActivity({ name: 'pull_credit', run: () => 1 });
    const b = defineActivity({ name: 'verify_identity', run: () => 2 });
    const original = defineWorkflow({ name: 'w', version: 1, run: async (ctx) => ctx.run(a, null) });
    const changed = defineWorkflow({
      name: 'w',
      version: 1,
      run: async (ctx) => {
        try {
          return await ctx.run(b, null);
        } catch {
          return 'swallowed'; // user code must not be able to paper over it
        }
      },
    });
    const { journal } = await execute(original, null);
    const replay = await execute(changed, null, journal);
    expect(replay.outcome.kind).toBe('failed');
    if (replay.outcome.kind !== 'failed') return;
    expect(replay.outcome.nonDeterminism).toBe(true);
    expect(replay.outcome.error.name).toBe(NonDeterminismError.name);
    expect(replay.outcome.error.message).toContain('step #0');
    expect(replay.outcome.error.message).toContain('activity:pull_credit');
    expect(replay.outcome.error.message).toContain('activity:verify_identity');
  });

  it('fails with NonDeterminismError when the code no longer makes a journaled call', async () => {
    const a = defineActivity({ name: 'a', run: () => 1 });
    const two = defineWorkflow({
      name: 'w',
      version: 1,
      run: async (ctx) => (await ctx.run(a, 1)) + (await ctx.run(a, 2)),
    });
    const { journal } = await execute(two, null);
    const none = defineWorkflow({
      name: 'w',
      version: 1,
      run: async () => new Promise<number>(() => undefined),
    });
    const replay = await execute(none, null, journal);
    expect(replay.outcome).toMatchObject({ kind: 'failed', nonDeterminism: true });
  });

  it('returns the same now/random/uuid on replay', async () => {
    const wf = defineWorkflow({
      name: 'values',
      version: 1,
      run: async (ctx) => ({ now: ctx.now(), random: ctx.random(), uuid: ctx.uuid() }),
    });
    const first = await execute(wf, null);
    expect(first.outcome.kind).toBe('completed');
    const replay = await execute(wf, null, first.journal);
    expect(replay.outcome).toEqual(first.outcome);
    expect(replay.host.journal).toEqual([]);
    expect(types(first.journal)).toEqual(['ValueRecorded#0', 'ValueRecorded#1', 'ValueRecorded#2']);
  });

  it('numbers parallel branches by call order and replays them whatever order they finished in', async () => {
    // Branch A's first step is slow, branch B's fast: live, B's second step is called before A's.
    const delays: Record<string, number> = { a1: 40, b1: 1, a2: 1, b2: 1 };
    const step = defineActivity({
      name: 'step',
      run: async (name: string) => {
        await new Promise((r) => setTimeout(r, delays[name]));
        return name;
      },
    });
    const wf = defineWorkflow({
      name: 'parallel',
      version: 1,
      run: async (ctx) => {
        const order: string[] = [];
        await Promise.all([
          (async () => order.push(await ctx.run(step, 'a1'), await ctx.run(step, 'a2')))(),
          (async () => order.push(await ctx.run(step, 'b1'), await ctx.run(step, 'b2')))(),
        ]);
        return order;
      },
    });
    const first = await execute(wf, null);
    const seqOf = (name: string): number =>
      (first.journal.find((e) => e.type === 'ActivityCompleted' && e.result === name) as { seq: number }).seq;
    expect([seqOf('a1'), seqOf('b1')]).toEqual([0, 1]);
    expect(seqOf('b2')).toBe(2); // called while a1 was still running
    expect(seqOf('a2')).toBe(3);

    // Replay with the opposite timing: the journal, not the clock, decides.
    Object.assign(delays, { a1: 1, b1: 40 });
    const replay = await execute(wf, null, first.journal);
    expect(replay.outcome).toEqual(first.outcome);
    expect(replay.host.journal).toEqual([]);
  });

  it('retries with backoff, keeps one idempotency key across attempts and resumes, and stops at a non-retryable error', async () => {
    const seen: Array<{ key: string; attempt: number; at: number }> = [];
    const flaky = defineActivity({
      name: 'flaky',
      retry: { maxAttempts: 5, initialDelayMs: 20, maxDelayMs: 100, jitter: false },
      run: (_: null, io: ActivityIO) => {
        seen.push({ key: io.idempotencyKey, attempt: io.attempt, at: Date.now() });
        if (io.attempt < 3) throw new Error('transient');
        if (io.attempt === 3) throw new NonRetryableError('card declined');
        return 'unreachable';
      },
    });
    const wf = defineWorkflow({ name: 'w', version: 1, run: async (ctx) => ctx.run(flaky, null) });
    const { outcome, journal } = await execute(wf, null);
    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3]);
    expect(new Set(seen.map((s) => s.key))).toEqual(new Set(['run-1:0']));
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(15);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(seen[1]!.at - seen[0]!.at - 5);
    expect(outcome.kind).toBe('failed');
    const failed = journal.find((e) => e.type === 'ActivityFailed');
    expect(failed).toMatchObject({
      attempts: 3,
      error: { name: 'NonRetryableError', message: 'card declined' },
    });

    // Replaying the failure throws the same error without calling the activity again.
    const replay = await execute(wf, null, journal);
    expect(seen).toHaveLength(3);
    expect(replay.outcome).toMatchObject({ kind: 'failed' });
  });

  it('gives up after maxAttempts and the workflow can handle the failure', async () => {
    let attempts = 0;
    const broken = defineActivity({
      name: 'broken',
      retry: { maxAttempts: 2, initialDelayMs: 1 },
      run: () => {
        attempts++;
        throw new Error('down');
      },
    });
    const wf = defineWorkflow({
      name: 'w',
      version: 1,
      run: async (ctx) => ctx.run(broken, null).catch((err: Error) => `handled: ${err.name}`),
    });
    const { outcome } = await execute(wf, null);
    expect(attempts).toBe(2);
    expect(outcome).toEqual({ kind: 'completed', result: 'handled: ActivityFailedError' });
  });

  describe('an activity journaled as started but never completed', () => {
    const started = (name: string): JournalEntry[] => [
      { type: 'ActivityStarted', seq: 0, name, epoch: 1, at: 0 },
    ];

    it('is reconciled when the reconcile hook finds the effect', async () => {
      const keys: string[] = [];
      let runs = 0;
      const charge = defineActivity({
        name: 'charge',
        run: () => (runs++, 'fresh'),
        reconcile: (_: null, io) => (keys.push(io.idempotencyKey), 'found-by-key'),
      });
      const wf = defineWorkflow({ name: 'w', version: 1, run: async (ctx) => ctx.run(charge, null) });
      const { outcome, host } = await execute(wf, null, started('charge'));
      expect(outcome).toEqual({ kind: 'completed', result: 'found-by-key' });
      expect(runs).toBe(0);
      expect(keys).toEqual(['run-1:0']);
      expect(host.journal[0]).toMatchObject({ type: 'ActivityCompleted', reconciled: true });
    });

    it('is re-run with the same idempotency key when reconcile finds nothing, without a second start entry', async () => {
      const keys: string[] = [];
      const charge = defineActivity({
        name: 'charge',
        run: (_: null, io) => (keys.push(io.idempotencyKey), 'charged'),
        reconcile: () => undefined,
      });
      const wf = defineWorkflow({ name: 'w', version: 1, run: async (ctx) => ctx.run(charge, null) });
      const { outcome, host } = await execute(wf, null, started('charge'));
      expect(outcome).toEqual({ kind: 'completed', result: 'charged' });
      expect(keys).toEqual(['run-1:0']);
      expect(types(host.journal)).toEqual(['ActivityCompleted#0']);
    });
  });

  it('journals ActivityStarted before a non-idempotent activity runs', async () => {
    let journalAtRun: string[] = [];
    const host = testHost();
    const charge = defineActivity({
      name: 'charge',
      idempotent: false,
      run: () => ((journalAtRun = types(host.journal)), 1),
    });
    const wf = defineWorkflow({ name: 'w', version: 1, run: async (ctx) => ctx.run(charge, null) });
    await execute(wf, null, [], host);
    expect(journalAtRun).toEqual(['ActivityStarted#0']);
  });

  it('suspends on a long sleep and completes it on resume once the time has passed', async () => {
    const wf = defineWorkflow({
      name: 'sleeper',
      version: 1,
      run: async (ctx) => {
        await ctx.sleep('1h');
        return 'woke';
      },
    });
    const first = await execute(wf, null);
    expect(first.outcome).toEqual({ kind: 'suspended' });
    const scheduled = first.journal[0] as { type: string; wakeAt: number };
    expect(scheduled.type).toBe('TimerScheduled');
    expect(first.host.suspensions[0]).toEqual({ wakeAt: scheduled.wakeAt, signals: [] });

    const later = testHost();
    later.clock = () => scheduled.wakeAt + 1;
    const resumed = await execute(wf, null, first.journal, later);
    expect(resumed.outcome).toEqual({ kind: 'completed', result: 'woke' });
    expect(types(later.journal)).toEqual(['TimerFired#0']);
  });

  it('receives a signal that arrived before the wait, and consumes each signal once', async () => {
    const wf = defineWorkflow({
      name: 'review',
      version: 1,
      run: async (ctx) => [await ctx.waitForSignal<number>('vote'), await ctx.waitForSignal<number>('vote')],
    });
    const host = testHost();
    host.inbox.push({ signalId: 's1', name: 'vote', payload: 1, receivedAt: 0 });
    const first = await execute(wf, null, [], host);
    expect(first.outcome).toEqual({ kind: 'suspended' });
    expect(host.suspensions).toEqual([{ wakeAt: null, signals: ['vote'] }]);

    const next = testHost();
    next.inbox.push(
      { signalId: 's1', name: 'vote', payload: 1, receivedAt: 0 },
      { signalId: 's2', name: 'vote', payload: 2, receivedAt: 1 },
    );
    const resumed = await execute(wf, null, first.journal, next);
    expect(resumed.outcome).toEqual({ kind: 'completed', result: [1, 2] });
  });

  it('times a signal wait out with SignalTimeoutError', async () => {
    const wf = defineWorkflow({
      name: 'review',
      version: 1,
      run: async (ctx) => ctx.waitForSignal('vote', { timeout: 30 }).catch((err: Error) => err.name),
    });
    const { outcome, journal } = await execute(wf, null);
    expect(outcome).toEqual({ kind: 'completed', result: 'SignalTimeoutError' });
    expect(types(journal)).toEqual(['SignalWaitStarted#0', 'SignalTimedOut#0']);
  });

  it('fails a workflow that awaits something other than a ctx call, saying what to do instead', async () => {
    const wf = defineWorkflow({
      name: 'raw-timer',
      version: 1,
      run: async () => new Promise((resolve) => setTimeout(resolve, 1_000)),
    });
    const { outcome } = await execute(wf, null);
    expect(outcome).toMatchObject({
      kind: 'failed',
      nonDeterminism: false,
      error: { code: 'BATON_WORKFLOW_BLOCKED' },
    });
    if (outcome.kind === 'failed')
      expect(outcome.error.message).toMatch(/only through ctx.run\/ctx.activity\/ctx.sleep/);
  });
});
