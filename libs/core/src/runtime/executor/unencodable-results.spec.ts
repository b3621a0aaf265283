/**
 * The executor with a result that has no JSON form, on a host that encodes each append with the
 * journal codec (as the worker's writer does): the step fails once with ActivityFailed, the
 * activity never runs again (also on replay), a reconciled result ends the same way, and an
 * append the step does not replace stops the run with the error.
 */
import { describe, expect, it } from 'vitest';
import { encodeEntries } from '../codec.js';
import type { ActivityFailedError } from '../../author/errors.js';
import { UnencodableValueError } from '../../author/errors.js';
import type { JournalEntry } from '../../shared/journal.js';
import { defineActivity, defineWorkflow } from '../../author/workflow.js';
import { ReplayExecutor } from './replay-executor.js';
import { execute, testHost, type TestHost } from './test-host.spec-helper.js';

/** A test host whose appends are encoded first, and fail as the worker's would. */
function encodingHost(): TestHost & { options: Array<Record<string, unknown> | undefined> } {
  const host = testHost();
  const base = host.append.bind(host);
  const options: Array<Record<string, unknown> | undefined> = [];
  return Object.assign(host, {
    options,
    append: async (entries: Parameters<TestHost['append']>[0], opts?: Record<string, unknown>) => {
      options.push(opts);
      encodeEntries(entries.map((e) => ({ ...e, epoch: 1, at: 0 }) as JournalEntry));
      return base(entries);
    },
  });
}

const types = (journal: JournalEntry[]): string[] =>
  journal.map((e) => ('seq' in e ? `${e.type}#${e.seq}` : e.type));

describe('executor: a result with no JSON form', () => {
  it('fails the step once with ActivityFailed, and a replay fails it again without running it', async () => {
    let executions = 0;
    const charge = defineActivity({ name: 'charge_card', run: async () => (executions++, { amount: 5n }) });
    const wf = defineWorkflow({
      name: 'w',
      version: 1,
      run: async (ctx) => {
        try {
          return await ctx.run(charge, null);
        } catch (err) {
          const cause = (err as ActivityFailedError).cause as { code?: string };
          return `${(err as Error).name}/${cause.code}`;
        }
      },
    });
    const host = encodingHost();
    const first = await execute(wf, null, [], host);
    expect(first.outcome).toEqual({ kind: 'completed', result: 'ActivityFailedError/BATON_UNENCODABLE' });
    expect(executions).toBe(1);
    expect(types(first.journal)).toEqual(['ActivityFailed#0']);
    expect(first.journal[0]).toMatchObject({
      attempts: 1,
      error: { name: 'UnencodableValueError', message: expect.stringContaining('a BigInt at $.amount') },
    });
    expect(host.options[0]).toEqual({ checkpoint: false, unencodableFailsStep: true });

    const replay = await execute(wf, null, first.journal, encodingHost());
    expect(replay.outcome).toEqual(first.outcome);
    expect(executions).toBe(1);
  });

  it('fails the step of an in-doubt activity whose reconcile finds an unencodable result, without running it', async () => {
    let executions = 0;
    const pay = defineActivity<null, { receipt: bigint }>({
      name: 'pay',
      idempotent: false,
      run: async () => (executions++, { receipt: 1n }),
      reconcile: async () => ({ receipt: 7n }),
    });
    const wf = defineWorkflow({ name: 'w', version: 1, run: (ctx) => ctx.run(pay, null) });
    const started: JournalEntry[] = [{ type: 'ActivityStarted', seq: 0, name: 'pay', epoch: 1, at: 0 }];
    const { outcome, journal } = await execute(wf, null, started, encodingHost());
    expect(executions).toBe(0);
    expect(types(journal)).toEqual(['ActivityStarted#0', 'ActivityFailed#0']);
    expect(journal[1]).toMatchObject({ attempts: 0 });
    expect(outcome).toMatchObject({
      kind: 'failed',
      error: {
        name: 'ActivityFailedError',
        cause: {
          code: 'BATON_UNENCODABLE',
          message: expect.stringContaining('reconciled result of activity pay'),
        },
      },
    });
  });

  it('stops the run with the error when a pipelined step the workflow has seen cannot be encoded', async () => {
    let executions = 0;
    const rate = defineActivity({ name: 'rate', run: async () => (executions++, 9n) });
    const wf = defineWorkflow({
      name: 'w',
      version: 1,
      run: async (ctx) => String(await ctx.run(rate, null)),
    });
    const host = encodingHost();
    const outcome = await new ReplayExecutor({
      workflow: wf,
      input: null,
      runId: host.runId,
      history: [],
      host,
      pipelineSteps: true,
    }).run();
    expect(executions).toBe(1);
    // The host refused the append before the loop looked again (it encodes at once): the run
    // stops with the error, for the worker to fail it (when the outcome comes first, the worker's
    // writer refuses RunCompleted after the refused entry: journal-writer.spec.ts).
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'aborted' });
    expect((outcome as { cause?: unknown }).cause).toBeInstanceOf(UnencodableValueError);
    expect(host.options[0]).toEqual({ checkpoint: false });
  });
});
