/**
 * Pipelined steps (`pipelineSteps`, opt-in): idempotent activities go on before their entries are
 * durable, but the run ends only with everything durable, a non-idempotent activity starts only
 * after everything before it is durable, and a failed append stops the run.
 */
import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../shared/journal.js';
import { defineActivity, defineWorkflow, type ActivityDefinition } from '../../author/workflow.js';
import type { ExecutionOutcome } from './execution-host.js';
import { ReplayExecutor } from './replay-executor.js';
import { testHost, type TestHost } from './test-host.spec-helper.js';

/** A host whose appends stay pending until released, logging what happened in order. */
function gatedHost(): TestHost & { log: string[]; releaseAll(): void; failNext(err: Error): void } {
  const host = testHost();
  const log: string[] = [];
  const waiting: Array<{ release: () => void; fail: (e: Error) => void }> = [];
  let failure: Error | undefined;
  const base = host.append.bind(host);
  return Object.assign(host, {
    log,
    append: (entries: Parameters<TestHost['append']>[0], options?: { checkpoint?: boolean }) => {
      const names = entries.map((e) => ('seq' in e ? `${e.type}#${e.seq}` : e.type)).join(',');
      log.push(`append ${names}`);
      return new Promise<void>((resolve, reject) => {
        waiting.push({
          release: () => {
            log.push(`durable ${names}`);
            void base(entries, options).then(resolve, reject);
          },
          fail: (e) => reject(e),
        });
        if (failure !== undefined) {
          const err = failure;
          failure = undefined;
          waiting.pop()!.fail(err);
        }
      });
    },
    releaseAll: () => {
      for (const w of waiting.splice(0)) w.release();
    },
    failNext: (err: Error) => {
      failure = err;
    },
  });
}

/** A workflow of `steps` sequential runs of `activity`, each on the previous result. */
function chainOf(activity: ActivityDefinition<number, number>, steps: number) {
  return defineWorkflow({
    name: 'chain',
    version: 1,
    run: async (ctx, x: number) => {
      for (let i = 0; i < steps; i++) x = await ctx.run(activity, x);
      return x;
    },
  });
}

async function turns(n = 10): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe('pipelined steps', () => {
  it('runs idempotent steps ahead of their entries and hands the outcome over with them pending', async () => {
    const host = gatedHost();
    const inc = defineActivity({ name: 'inc', run: (x: number) => (host.log.push(`run ${x}`), x + 1) });
    const wf = chainOf(inc, 3);
    const executor = new ReplayExecutor({
      workflow: wf,
      input: 0,
      runId: 'run-1',
      history: [],
      host,
      pipelineSteps: true,
    });
    let outcome: ExecutionOutcome | undefined;
    const running = executor.run().then((o) => (outcome = o));
    await turns();
    // All three steps ran although nothing is durable yet; the outcome is handed over, and the
    // host (the worker's journal writer) journals it after the pending entries.
    expect(host.log.filter((l) => l.startsWith('run'))).toEqual(['run 0', 'run 1', 'run 2']);
    expect(host.log.some((l) => l.startsWith('durable'))).toBe(false);
    await running;
    expect(outcome).toEqual({ kind: 'completed', result: 3 });
    host.releaseAll();
    await turns();
    expect(host.journal.map((e: JournalEntry) => e.type)).toEqual([
      'ActivityCompleted',
      'ActivityCompleted',
      'ActivityCompleted',
    ]);
  });

  it('starts a non-idempotent activity only after every earlier entry is durable', async () => {
    const host = gatedHost();
    const inc = defineActivity({ name: 'inc', run: (x: number) => x + 1 });
    const charge = defineActivity({
      name: 'charge',
      idempotent: false,
      run: (x: number) => (host.log.push(`charge ${x}`), x * 10),
    });
    const wf = defineWorkflow({
      name: 'mixed',
      version: 1,
      run: async (ctx, x: number) => ctx.run(charge, await ctx.run(inc, x)),
    });
    const executor = new ReplayExecutor({
      workflow: wf,
      input: 1,
      runId: 'run-1',
      history: [],
      host,
      pipelineSteps: true,
    });
    const running = executor.run();
    await turns();
    expect(host.log).toEqual(['append ActivityCompleted#0']);
    host.releaseAll(); // inc's entry durable: charge may journal its start
    await turns();
    expect(host.log.slice(1)).toEqual(['durable ActivityCompleted#0', 'append ActivityStarted#1']);
    host.releaseAll();
    await turns();
    expect(host.log).toContain('charge 2');
    expect(host.log.indexOf('charge 2')).toBeGreaterThan(host.log.indexOf('durable ActivityStarted#1'));
    host.releaseAll();
    await turns();
    host.releaseAll();
    expect(await running).toEqual({ kind: 'completed', result: 20 });
  });

  it('stops the run when a pipelined entry cannot be journaled', async () => {
    const host = gatedHost();
    const inc = defineActivity({ name: 'inc', run: (x: number) => x + 1 });
    const wf = chainOf(inc, 3);
    const lost = new Error('lease lost');
    host.failNext(lost);
    const executor = new ReplayExecutor({
      workflow: wf,
      input: 0,
      runId: 'run-1',
      history: [],
      host,
      pipelineSteps: true,
    });
    const outcome = await executor.run();
    expect(outcome).toEqual({ kind: 'stopped', reason: 'aborted', cause: lost });
  });

  it('without the option, each step waits for its own entry (the default)', async () => {
    const host = gatedHost();
    const inc = defineActivity({ name: 'inc', run: (x: number) => (host.log.push(`run ${x}`), x + 1) });
    const wf = chainOf(inc, 2);
    const running = new ReplayExecutor({ workflow: wf, input: 0, runId: 'run-1', history: [], host }).run();
    await turns();
    expect(host.log).toEqual(['run 0', 'append ActivityCompleted#0']);
    host.releaseAll();
    await turns();
    expect(host.log.slice(2)).toEqual(['durable ActivityCompleted#0', 'run 1', 'append ActivityCompleted#1']);
    host.releaseAll();
    expect(await running).toEqual({ kind: 'completed', result: 2 });
  });
});
