import { describe, expect, it } from 'vitest';
import { defineQuery } from '../../author/query.js';
import { defineSignal } from '../../author/signal.js';
import { QueryReadOnlyError } from '../errors.js';
import { defineActivity, defineWorkflow } from '../../author/workflow.js';
import type { JournalEntry } from '../../shared/journal.js';
import type { ExecutionHost } from './execution-host.js';
import { ReplayExecutor } from './replay-executor.js';
import { execute, testHost } from './test-host.spec-helper.js';

const progress = defineQuery<{ done: number; last: string | null }>('progress');
const item = defineQuery<string | null, number>('item');
const approval = defineSignal<boolean>('approval');

/** Counts every activity execution, so a replay that ran one is caught. */
let executions = 0;
const step = defineActivity({
  name: 'step',
  run: async (name: string) => {
    executions++;
    await new Promise((resolve) => setTimeout(resolve, 1));
    return name;
  },
});

/** Three steps, a signal wait, then two more; its queries show what it has done. */
const order = defineWorkflow({
  name: 'order',
  version: 1,
  run: async (ctx, steps: number) => {
    const done: string[] = [];
    ctx.onQuery(progress, () => ({ done: done.length, last: done.at(-1) ?? null }));
    ctx.onQuery(item, (index) => done[index] ?? null);
    for (let i = 0; i < steps; i++) done.push(await ctx.run(step, `s${i}`));
    const ok = await ctx.waitForSignal(approval);
    for (let i = 0; i < 2; i++) done.push(await ctx.run(step, ok ? `after${i}` : `no${i}`));
    return done;
  },
});

/** A host that fails the spec on any write, wait or side effect: what replay-only must never call. */
function readOnlyHost(runId: string): ExecutionHost & { calls: string[] } {
  const calls: string[] = [];
  const refuse = (what: string) => (): never => {
    calls.push(what);
    throw new Error(`replay-only called host.${what}`);
  };
  return {
    runId,
    calls,
    append: refuse('append'),
    suspend: refuse('suspend'),
    readSignals: refuse('readSignals'),
    takeRateToken: refuse('takeRateToken'),
    startChild: refuse('startChild'),
    assertMayStartActivity: refuse('assertMayStartActivity'),
    clock: () => 1_000,
  };
}

async function replayOnly(
  workflow: Parameters<typeof execute>[0],
  input: unknown,
  history: JournalEntry[],
): Promise<{ executor: ReplayExecutor; host: ReturnType<typeof readOnlyHost>; settled: boolean }> {
  const host = readOnlyHost('run-q');
  const executor = new ReplayExecutor({ workflow, input, runId: 'run-q', history, host, replayOnly: true });
  const end = await executor.replayToEnd();
  if (end.error !== undefined) throw end.error;
  return { executor, host, settled: end.settled };
}

/** A replay-only executor of `workflow` with no history, replayed to where it waits: a held run's state. */
async function heldAndReplayed(workflow: Parameters<typeof execute>[0]): Promise<ReplayExecutor> {
  const executor = new ReplayExecutor({
    workflow,
    input: null,
    runId: 'run-1',
    history: [],
    host: testHost(),
    replayOnly: true,
  });
  await executor.replayToEnd();
  return executor;
}

/** The journal of `order` run live until it suspends on its signal. */
async function suspendedJournal(): Promise<JournalEntry[]> {
  const { outcome, journal } = await execute(order, 3);
  expect(outcome).toEqual({ kind: 'suspended' });
  return journal;
}

describe('queries: a held run answers from its in-memory state', () => {
  it('answers what the workflow holds now, and the answer moves as the run advances', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gated = defineActivity({ name: 'gated', run: async (n: number) => (await gate, n) });
    const wf = defineWorkflow({
      name: 'counting',
      version: 1,
      run: async (ctx) => {
        let count = 0;
        ctx.onQuery(progress, () => ({ done: count, last: null }));
        count += await ctx.run(gated, 1);
        count += await ctx.run(gated, 2);
        return count;
      },
    });
    const host = testHost();
    const executor = new ReplayExecutor({ workflow: wf, input: null, runId: host.runId, history: [], host });
    const running = executor.run();
    await new Promise((resolve) => setImmediate(resolve));
    expect(executor.answerQuery('progress', undefined)).toEqual({
      status: 'answered',
      result: { done: 0, last: null },
    });
    release();
    expect(await running).toEqual({ kind: 'completed', result: 3 });
    expect(executor.answerQuery('progress', undefined)).toEqual({
      status: 'answered',
      result: { done: 3, last: null },
    });
    // Queries journal nothing: the two steps and nothing else.
    expect(host.journal.map((e) => e.type)).toEqual(['ActivityCompleted', 'ActivityCompleted']);
  });

  it('passes the arguments to the handler and copies the answer as it was when asked', async () => {
    const list: string[] = ['a'];
    const wf = defineWorkflow({
      name: 'list',
      version: 1,
      run: async (ctx) => {
        ctx.onQuery(defineQuery<string[]>('all'), () => list);
        ctx.onQuery(item, (i) => list[i] ?? null);
        return new Promise<never>(() => undefined);
      },
    });
    const executor = await heldAndReplayed(wf);
    const all = executor.answerQuery('all', undefined);
    list.push('b');
    expect(all).toEqual({ status: 'answered', result: ['a'] });
    expect(executor.answerQuery('item', 1)).toEqual({ status: 'answered', result: 'b' });
    expect(executor.answerQuery('item', 5)).toEqual({ status: 'answered', result: null });
  });

  it('refuses a handler that calls ctx.run, naming the query and the call, and the run goes on untouched', async () => {
    executions = 0;
    const sneaky = defineWorkflow({
      name: 'sneaky',
      version: 1,
      run: async (ctx) => {
        const done: string[] = [];
        ctx.onQuery(defineQuery<number>('sideEffect'), () => {
          void ctx.run(step, 'from-a-query');
          return done.length;
        });
        ctx.onQuery(defineQuery<number>('stamp'), () => ctx.now());
        ctx.onQuery(defineQuery<null>('nap'), () => (void ctx.sleep('1s'), null));
        done.push(await ctx.run(step, 'a'));
        done.push(await ctx.run(step, 'b'));
        return done;
      },
    });
    const host = testHost();
    const executor = new ReplayExecutor({
      workflow: sneaky,
      input: null,
      runId: host.runId,
      history: [],
      host,
    });
    const running = executor.run();
    await new Promise((resolve) => setImmediate(resolve));
    for (const [name, call] of [
      ['sideEffect', 'ctx.run'],
      ['stamp', 'ctx.now'],
      ['nap', 'ctx.sleep'],
    ] as const) {
      const answer = executor.answerQuery(name, undefined);
      expect(answer).toMatchObject({
        status: 'failed',
        error: { name: 'QueryReadOnlyError', code: 'BATON_QUERY_READ_ONLY' },
      });
      if (answer.status !== 'failed') continue;
      expect(answer.error.message).toContain(`query '${name}' called ${call}`);
    }
    expect(await running).toEqual({ kind: 'completed', result: ['a', 'b'] });
    // The refused calls took no step: exactly the run's own two, numbered 0 and 1.
    expect(executions).toBe(2);
    expect(host.journal.map((e) => ('seq' in e ? `${e.type}#${e.seq}` : e.type))).toEqual([
      'ActivityCompleted#0',
      'ActivityCompleted#1',
    ]);
    // And the same ctx works again once the handler returned.
    const replay = await execute(sneaky, null, host.journal);
    expect(replay.outcome).toEqual({ kind: 'completed', result: ['a', 'b'] });
  });

  it('refuses every function of the context inside a handler, each by its own name (invariant 4)', async () => {
    const wf = defineWorkflow({
      name: 'every-method',
      version: 1,
      run: async (ctx) => {
        ctx.onQuery(defineQuery<{ refused: string[]; let: string[] }>('everything'), () => {
          const refused: string[] = [];
          const through: string[] = [];
          const methods = ctx as unknown as Record<string, unknown>;
          for (const key of Object.keys(ctx)) {
            if (key === 'isReplaying') continue;
            const method = methods[key];
            if (typeof method !== 'function') continue;
            try {
              (method as () => unknown)();
              through.push(key);
            } catch (err) {
              const refusedHere =
                err instanceof QueryReadOnlyError &&
                err.message.includes(`query 'everything' called ctx.${key}`);
              (refusedHere ? refused : through).push(key);
            }
          }
          return { refused, let: through };
        });
        return new Promise<never>(() => undefined);
      },
    });
    const executor = await heldAndReplayed(wf);
    const answer = executor.answerQuery('everything', undefined);
    expect(answer.status).toBe('answered');
    if (answer.status !== 'answered') return;
    const { refused, let: through } = answer.result as { refused: string[]; let: string[] };
    expect(through).toEqual([]);
    expect(refused).toEqual(
      expect.arrayContaining(['run', 'activity', 'sleep', 'now', 'startChild', 'executeChild', 'onQuery']),
    );
    // Eighteen functions today: the loop cannot pass by finding none.
    expect(refused.length).toBeGreaterThanOrEqual(18);
  });

  it('lists the registered names for an unknown query, and refuses async and unencodable answers', async () => {
    const wf = defineWorkflow({
      name: 'odd',
      version: 1,
      run: async (ctx) => {
        ctx.onQuery(defineQuery<number>('later'), (() => Promise.resolve(1)) as unknown as () => number);
        ctx.onQuery(defineQuery<bigint>('big'), () => 10n);
        ctx.onQuery(defineQuery<string>('boom'), () => {
          throw new Error('state not ready');
        });
        return new Promise<never>(() => undefined);
      },
    });
    const executor = await heldAndReplayed(wf);
    expect(executor.answerQuery('progres', undefined)).toEqual({
      status: 'unknown-query',
      registered: ['big', 'boom', 'later'],
    });
    expect(executor.answerQuery('later', undefined)).toMatchObject({
      status: 'failed',
      error: { code: 'BATON_QUERY_ASYNC', message: expect.stringContaining("query 'later'") },
    });
    expect(executor.answerQuery('big', undefined)).toMatchObject({
      status: 'failed',
      error: { code: 'BATON_UNENCODABLE', message: expect.stringContaining("the answer of query 'big'") },
    });
    expect(executor.answerQuery('boom', undefined)).toMatchObject({
      status: 'failed',
      error: { name: 'Error', message: 'state not ready' },
    });
  });

  it('refuses a query name a URL or a command line could not carry, and a handler that is not a function', async () => {
    expect(() => defineQuery('has space')).toThrow(/defineQuery: the query name "has space" is invalid/);
    expect(() => defineQuery('')).toThrow(/1-128 characters/);
    const wf = defineWorkflow({
      name: 'bad',
      version: 1,
      run: async (ctx) => {
        ctx.onQuery(progress, 'not a function' as never);
        return null;
      },
    });
    const { outcome } = await execute(wf, null);
    expect(outcome).toMatchObject({
      kind: 'failed',
      error: { message: "ctx.onQuery('progress'): the handler must be a function" },
    });
  });
});

describe('queries: replay-only, for a run nobody holds', () => {
  it('answers a suspended run from its journal without writing, waiting or running an activity', async () => {
    const journal = await suspendedJournal();
    executions = 0;
    const { executor, host, settled } = await replayOnly(order, 3, journal);
    expect(settled).toBe(false);
    expect(executor.answerQuery('progress', undefined)).toEqual({
      status: 'answered',
      result: { done: 3, last: 's2' },
    });
    expect(executor.answerQuery('item', 1)).toEqual({ status: 'answered', result: 's1' });
    expect(executions).toBe(0);
    expect(host.calls).toEqual([]);
  });

  it('answers a finished run from its whole journal', async () => {
    const suspended = await suspendedJournal();
    const host = testHost();
    host.inbox.push({ signalId: 'sig-1', name: 'approval', payload: true, at: 1 } as never);
    const { outcome, journal } = await execute(order, 3, suspended, host);
    expect(outcome).toEqual({
      kind: 'completed',
      result: ['s0', 's1', 's2', 'after0', 'after1'],
    });
    executions = 0;
    const replayed = await replayOnly(order, 3, journal);
    expect(replayed.settled).toBe(true);
    expect(replayed.executor.answerQuery('progress', undefined)).toEqual({
      status: 'answered',
      result: { done: 5, last: 'after1' },
    });
    expect(executions).toBe(0);
    expect(replayed.host.calls).toEqual([]);
  });

  it('stops at the end of a journal cut mid-run: a step in doubt, a timer and parallel branches stay pending', async () => {
    let charging = false;
    const charge = defineActivity({
      name: 'charge',
      idempotent: false,
      run: () => {
        charging = true;
        executions++;
        return new Promise<never>(() => undefined);
      },
    });
    const wf = defineWorkflow({
      name: 'mixed',
      version: 1,
      run: async (ctx) => {
        const seen: string[] = [];
        ctx.onQuery(defineQuery<string[]>('seen'), () => seen);
        await Promise.all([
          ctx.run(step, 'x').then((v) => seen.push(v)),
          ctx.run(step, 'y').then((v) => seen.push(v)),
        ]);
        seen.push(`patched:${String(ctx.patched('p1'))}`);
        await ctx.run(charge, null);
        seen.push('charged');
        await ctx.sleep('1h');
        return seen;
      },
    });
    // The journal as a crash would leave it: both branches done, the charge started, never finished.
    const host = testHost();
    const live = new ReplayExecutor({ workflow: wf, input: null, runId: host.runId, history: [], host });
    const running = live.run();
    while (!charging) await new Promise((resolve) => setTimeout(resolve, 1));
    live.abort(new Error('crash'));
    await running;
    expect(host.journal.map((e) => e.type)).toContain('ActivityStarted');
    const seenLive = live.answerQuery('seen', undefined);
    executions = 0;
    const { executor, host: readOnly } = await replayOnly(wf, null, host.journal);
    expect(executor.answerQuery('seen', undefined)).toEqual(seenLive);
    expect(seenLive).toMatchObject({
      status: 'answered',
      result: [expect.any(String), expect.any(String), 'patched:true'],
    });
    expect(executions).toBe(0);
    expect(readOnly.calls).toEqual([]);
  });

  it('reports a replay the code no longer matches instead of answering', async () => {
    const journal = await suspendedJournal();
    const changed = defineWorkflow({
      name: 'order',
      version: 1,
      run: async (ctx) => {
        ctx.onQuery(progress, () => ({ done: 0, last: null }));
        await ctx.sleep('1s');
        return [];
      },
    });
    const host = readOnlyHost('run-q');
    const executor = new ReplayExecutor({
      workflow: changed,
      input: 3,
      runId: 'run-q',
      history: journal,
      host,
      replayOnly: true,
    });
    const end = await executor.replayToEnd();
    expect(end.error?.name).toBe('NonDeterminismError');
    expect(host.calls).toEqual([]);
  });

  it('refuses replayToEnd on an executor that runs the workflow for real', async () => {
    const executor = new ReplayExecutor({
      workflow: order,
      input: 1,
      runId: 'r',
      history: [],
      host: testHost(),
    });
    await expect(executor.replayToEnd()).rejects.toThrow(/replayOnly/);
  });
});
