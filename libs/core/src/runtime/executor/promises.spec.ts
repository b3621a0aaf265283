/**
 * Durable promises in the replay executor (author/promise.ts, replay-executor.ts invariant 11,
 * pending-waits.ts invariants 4 to 6): the token journaled once and read back on replay, the
 * record written before any activity may leak the token, completion, rejection, timeout and the
 * schema's two checks. The store side is the conformance suite's (libs/testing store/promises.ts).
 */
import { describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '../../author/workflow.js';
import { PromiseRejectedError, PromiseTimeoutError } from '../../author/errors.js';
import {
  PROMISE_SIGNAL,
  promiseSignalId,
  type PromiseDelivery,
  type PromiseOptions,
} from '../../author/promise.js';
import type { StandardSchemaV1 } from '../../author/standard-schema.js';
import type { JournalEntry } from '../../shared/journal.js';
import type { NewPromise } from './execution-host.js';
import { execute, testHost, type TestHost } from './test-host.spec-helper.js';

/** A test host that records its promise records and answers expire from `completed`. */
function promiseHost(): TestHost & {
  records: NewPromise[];
  expired: string[];
  completed: Map<string, PromiseDelivery>;
} {
  const host = Object.assign(testHost(), {
    records: [] as NewPromise[],
    expired: [] as string[],
    completed: new Map<string, PromiseDelivery>(),
  });
  host.createPromise = async (record) => {
    await Promise.resolve();
    host.records.push(record);
  };
  host.expirePromise = async (token) => {
    host.expired.push(token);
    return host.completed.get(token);
  };
  return host;
}

/** The inbox entry the store adds when `token`'s promise of step `seq` is completed. */
function completion(seq: number, delivery: PromiseDelivery): TestHost['inbox'][number] {
  return { signalId: promiseSignalId(seq), name: PROMISE_SIGNAL, payload: delivery, receivedAt: Date.now() };
}

const created = (journal: JournalEntry[]) =>
  journal.filter((e): e is Extract<JournalEntry, { type: 'PromiseCreated' }> => e.type === 'PromiseCreated');

/** A workflow that makes a promise, hands its token to an activity, and returns the value. */
function approvalWorkflow(sent: string[], options: PromiseOptions<{ approved: boolean }> = {}) {
  const send = defineActivity({ name: 'send_link', run: (token: string) => void sent.push(token) });
  return defineWorkflow({
    name: 'approval',
    version: 1,
    run: async (ctx) => {
      const approval = ctx.promise<{ approved: boolean }>(options);
      await ctx.run(send, approval.token);
      return approval.value;
    },
  });
}

describe('ctx.promise', () => {
  it('journals a fresh token once, records it before the token leaves the run, and suspends for it', async () => {
    const sent: string[] = [];
    const host = promiseHost();
    const first = await execute(approvalWorkflow(sent), null, [], host);
    expect(first.outcome).toEqual({ kind: 'suspended' });
    const [entry] = created(first.journal);
    expect(entry).toMatchObject({ seq: 0, timeoutAt: null });
    expect(entry!.token).toMatch(/^bp_[A-Za-z0-9_-]{32}$/);
    expect(host.records).toEqual([{ token: entry!.token, seq: 0, timeoutAt: null }]);
    // The activity that hands the token out ran with it, after the record was written.
    expect(sent).toEqual([entry!.token]);
    expect(host.suspensions).toEqual([{ wakeAt: null, signals: [PROMISE_SIGNAL] }]);
  });

  it('reads the token back from the journal on replay: never a new one, the record written again', async () => {
    const sent: string[] = [];
    const first = await execute(approvalWorkflow(sent), null, [], promiseHost());
    const token = created(first.journal)[0]!.token;
    const replayHost = promiseHost();
    const replay = await execute(approvalWorkflow(sent), null, first.journal, replayHost);
    expect(replay.outcome).toEqual({ kind: 'suspended' });
    expect(created(replayHost.journal)).toEqual([]);
    expect(replayHost.records.map((r) => r.token)).toEqual([token]);
    expect(sent).toEqual([token]); // the activity was journaled: not run again
  });

  it('completes with the value in its inbox entry, and a replay of the whole journal gives the same', async () => {
    const sent: string[] = [];
    const first = await execute(approvalWorkflow(sent), null, [], promiseHost());
    const token = created(first.journal)[0]!.token;
    const host = promiseHost();
    host.inbox.push(completion(0, { token, outcome: 'resolved', value: { approved: true } }));
    const woken = await execute(approvalWorkflow(sent), null, first.journal, host);
    expect(woken.outcome).toEqual({ kind: 'completed', result: { approved: true } });
    expect(host.journal).toContainEqual(
      expect.objectContaining({
        type: 'PromiseCompleted',
        seq: 0,
        outcome: 'resolved',
        value: { approved: true },
      }),
    );
    const replayHost = promiseHost();
    const replay = await execute(approvalWorkflow(sent), null, woken.journal, replayHost);
    expect(replay.outcome).toEqual({ kind: 'completed', result: { approved: true } });
    expect(replayHost.journal).toEqual([]);
    expect(replayHost.records).toEqual([]); // a completed promise needs no record
  });

  it('skips an inbox entry that does not name its token, and suspends past it', async () => {
    const sent: string[] = [];
    const first = await execute(approvalWorkflow(sent), null, [], promiseHost());
    const host = promiseHost();
    const forged = completion(0, {
      token: `bp_${'A'.repeat(32)}`,
      outcome: 'resolved',
      value: { approved: true },
    });
    host.inbox.push(forged);
    let consumed: string[] = [];
    const suspend = host.suspend;
    host.suspend = async (request) => {
      consumed = request.consumedSignalIds;
      return suspend(request);
    };
    const resumed = await execute(approvalWorkflow(sent), null, first.journal, host);
    expect(resumed.outcome).toEqual({ kind: 'suspended' });
    expect(consumed).toContain(forged.signalId);
    expect(host.journal.filter((e) => e.type === 'PromiseCompleted')).toEqual([]);
  });

  it('rejects p.value with PromiseRejectedError carrying the error given, journaled', async () => {
    const errors: unknown[] = [];
    const wf = defineWorkflow({
      name: 'rejecting',
      version: 1,
      run: async (ctx) => {
        const p = ctx.promise();
        try {
          return await p.value;
        } catch (err) {
          errors.push(err);
          return 'refused';
        }
      },
    });
    const first = await execute(wf, null, [], promiseHost());
    const token = created(first.journal)[0]!.token;
    const host = promiseHost();
    host.inbox.push(
      completion(0, { token, outcome: 'rejected', error: { name: 'Error', message: 'declined by Ann' } }),
    );
    const done = await execute(wf, null, first.journal, host);
    expect(done.outcome).toEqual({ kind: 'completed', result: 'refused' });
    expect(errors[0]).toBeInstanceOf(PromiseRejectedError);
    expect((errors[0] as PromiseRejectedError).failure.message).toBe('declined by Ann');
    expect((errors[0] as Error).message).toContain('declined by Ann');
    // Replayed, the rejection is the journal's.
    errors.length = 0;
    const replay = await execute(wf, null, done.journal, promiseHost());
    expect(replay.outcome).toEqual({ kind: 'completed', result: 'refused' });
    expect(errors[0]).toBeInstanceOf(PromiseRejectedError);
  });

  it('times out at its journaled deadline after closing the record; a completion that came first wins', async () => {
    const outcomes: unknown[] = [];
    const wf = defineWorkflow({
      name: 'timing-out',
      version: 1,
      run: async (ctx) => {
        const p = ctx.promise({ timeout: '1ms' });
        return p.value.catch((err: unknown) => (outcomes.push(err), 'late'));
      },
    });
    const host = promiseHost();
    const timedOut = await execute(wf, null, [], host);
    expect(timedOut.outcome).toEqual({ kind: 'completed', result: 'late' });
    const token = created(timedOut.journal)[0]!.token;
    expect(host.expired).toEqual([token]);
    expect(outcomes[0]).toBeInstanceOf(PromiseTimeoutError);
    expect(timedOut.journal.map((e) => e.type)).toContain('PromiseTimedOut');

    // The same deadline, but the store says a completion came just before it.
    const racing = promiseHost();
    const history = created(timedOut.journal);
    racing.completed.set(token, { token, outcome: 'resolved', value: 'in time' });
    const won = await execute(wf, null, history, racing);
    expect(won.outcome).toEqual({ kind: 'completed', result: 'in time' });
    expect(racing.journal).toContainEqual(
      expect.objectContaining({ type: 'PromiseCompleted', value: 'in time' }),
    );
  });

  it("hands the workflow the schema's output, rejects a value only the schema refuses, and needs a JSON form", async () => {
    const jsonForm = { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] };
    const positive: StandardSchemaV1<unknown, { cents: number }> = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: (value) => {
          const amount = (value as { amount?: unknown }).amount;
          return typeof amount === 'number' && amount > 0
            ? { value: { cents: Math.round(amount * 100) } }
            : { issues: [{ message: 'must be above zero', path: ['amount'] }] };
        },
        ...{ jsonSchema: { input: () => jsonForm, output: () => jsonForm } },
      },
    };
    const seen: unknown[] = [];
    const wf = defineWorkflow({
      name: 'paid',
      version: 1,
      run: async (ctx) => {
        const p = ctx.promise({ schema: positive });
        return p.value.catch((err: unknown) => (seen.push(err), 'invalid'));
      },
    });
    const host = promiseHost();
    const first = await execute(wf, null, [], host);
    expect(host.records[0]?.schema).toEqual(jsonForm);
    const token = created(first.journal)[0]!.token;

    const good = promiseHost();
    good.inbox.push(completion(0, { token, outcome: 'resolved', value: { amount: 1.5 } }));
    expect((await execute(wf, null, first.journal, good)).outcome).toEqual({
      kind: 'completed',
      result: { cents: 150 },
    });
    expect(good.journal).toContainEqual(
      expect.objectContaining({ type: 'PromiseCompleted', value: { cents: 150 } }),
    );

    const bad = promiseHost();
    bad.inbox.push(completion(0, { token, outcome: 'resolved', value: { amount: -1 } }));
    expect((await execute(wf, null, first.journal, bad)).outcome).toEqual({
      kind: 'completed',
      result: 'invalid',
    });
    expect((seen[0] as PromiseRejectedError).failure).toMatchObject({
      code: 'BATON_INVALID_INPUT',
      message: expect.stringContaining('$.amount: must be above zero'),
    });

    const { jsonSchema: _none, ...withoutJson } = positive['~standard'] as (typeof positive)['~standard'] & {
      jsonSchema?: unknown;
    };
    const noJson = defineWorkflow({
      name: 'no-json',
      version: 1,
      run: async (ctx) => ctx.promise({ schema: { '~standard': withoutJson } }).value,
    });
    const refused = await execute(noJson, null, [], promiseHost());
    expect(refused.outcome).toMatchObject({
      kind: 'failed',
      error: { code: 'BATON_CONFIG', message: expect.stringContaining('no JSON Schema form') },
    });
  });

  it('keeps a pipelined activity from starting before the promise record and its entry are durable', async () => {
    const { ReplayExecutor } = await import('./replay-executor.js');
    for (const slow of ['record', 'entry'] as const) {
      const sent: string[] = [];
      const host = promiseHost();
      let recorded = false;
      host.createPromise = async () => {
        if (slow === 'record') await new Promise((resolve) => setTimeout(resolve, 30));
        recorded = true;
      };
      const append = host.append;
      host.append = async (entries, options) => {
        if (slow === 'entry' && entries.some((e) => e.type === 'PromiseCreated'))
          await new Promise((resolve) => setTimeout(resolve, 30));
        return append(entries, options);
      };
      const send = defineActivity({
        name: 'send',
        run: () => void sent.push(recorded && created(host.journal).length === 1 ? 'after' : 'before'),
      });
      const quick = defineActivity({ name: 'quick', run: () => new Promise((r) => setTimeout(r, 2)) });
      const wf = defineWorkflow({
        name: 'pipelined',
        version: 1,
        run: async (ctx) => {
          // A pipelined step in flight when the promise is made: once it is back, nothing else
          // holds the next step back but the promise's own writes.
          const first = ctx.run(quick, null);
          const p = ctx.promise();
          await first;
          await ctx.run(send, p.token);
          return 'sent';
        },
      });
      const executor = new ReplayExecutor({
        workflow: wf,
        input: null,
        runId: host.runId,
        history: [],
        host,
        pipelineSteps: true,
      });
      expect(await executor.run()).toEqual({ kind: 'completed', result: 'sent' });
      expect(sent, `slow ${slow}`).toEqual(['after']);
    }
  });
});
