import { afterEach, describe, expect, it } from 'vitest';
import { defineSignal, defineWorkflow, InvalidInputError, type StandardSchemaV1 } from '@baton/core';
import { decodeMessage } from '@baton/core/runtime';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';
import { silentLogger, type Logger } from './logger.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

describe('signals to a finished run (memory adapters)', () => {
  it('acks and drops them with a debug line: nothing piles up in the inbox, nothing is dead-lettered', async () => {
    const wf = defineWorkflow({ name: 'quick', version: 1, run: async () => 'done' });
    const dropped: unknown[] = [];
    const logger: Logger = {
      ...silentLogger,
      debug: (obj, msg) => {
        if (msg === 'signal dropped: its run has already finished') dropped.push(obj);
      },
    };
    current = fleet({ workflows: [wf], logger });
    await current.spawn();
    const run = await current.client.start(wf, null);
    expect(await run.result({ timeoutMs: 5_000 })).toBe('done');
    for (let i = 0; i < 20; i++) await current.client.signal(run.runId, 'late', { i });
    await until(() => dropped.length === 20, 5_000, 'twenty dropped signals');
    expect(dropped[0]).toMatchObject({ runId: run.runId, signal: 'late' });
    expect(await current.store.signals.read(run.runId)).toEqual([]);
    expect(await current.transport.deadLetters.list()).toEqual([]);
    expect((await current.client.describe(run.runId)).status).toBe('completed');
  });
});

describe('typed signals (memory adapters)', () => {
  it('a signal sent with its definition reaches the run waiting on the same definition', async () => {
    const approval = defineSignal<{ approved: boolean; by: string }>('approval');
    const wf = defineWorkflow({
      name: 'awaits_approval',
      version: 1,
      run: async (ctx, input: { request: string }) => {
        const decision = await ctx.waitForSignal(approval);
        return `${input.request}: ${decision.approved ? 'approved' : 'refused'} by ${decision.by}`;
      },
    });
    current = fleet({ workflows: [wf] });
    await current.spawn();
    const run = await current.client.start(wf, { request: 'R-1' });
    await until(
      async () => (await current?.client.describe(run.runId).catch(() => undefined))?.status === 'suspended',
      5_000,
      'the run waiting for its signal',
    );
    await current.client.signal(run.runId, approval, { approved: true, by: 'ana' });
    expect(await run.result({ timeoutMs: 5_000 })).toBe('R-1: approved by ana');
    const history = (await current.client.history(run.runId)).map((p) => p.entry);
    expect(history).toContainEqual(expect.objectContaining({ type: 'SignalWaitStarted', name: 'approval' }));
  });
});

describe('signals with a schema (memory adapters)', () => {
  type Approval = { approved: boolean; by: string };
  /** `{ approved: boolean, by: non-blank string }`, `by` trimmed: a Standard Schema by hand. */
  const approvalSchema: StandardSchemaV1<Approval, Approval> = {
    '~standard': {
      version: 1,
      vendor: 'baton-spec',
      validate: (value) => {
        const v = (value ?? {}) as Partial<Record<keyof Approval, unknown>>;
        const issues = [];
        if (typeof v.approved !== 'boolean')
          issues.push({ message: 'expected a boolean', path: ['approved'] });
        if (typeof v.by !== 'string' || v.by.trim() === '')
          issues.push({ message: 'expected a non-blank string', path: ['by'] });
        return issues.length > 0
          ? { issues }
          : { value: { approved: v.approved as boolean, by: (v.by as string).trim() } };
      },
    },
  };
  const approval = defineSignal('approval', { schema: approvalSchema });
  const twoApprovals = defineWorkflow({
    name: 'two_approvals',
    version: 1,
    run: async (ctx, order: string) => {
      const first = await ctx.waitForSignal(approval);
      const second = await ctx.waitForSignal(approval);
      const verdict = (d: { approved: boolean; by: string }) => `${d.approved ? 'yes' : 'no'}:${d.by}`;
      return `${order} ${verdict(first)} ${verdict(second)}`;
    },
  });
  const refusedLogged = (log: unknown[]) =>
    log.filter((line) => (line as { msg: string }).msg.startsWith("signal 'approval' to run"));

  it('skips a payload that fails the schema (sent by name, as the CLI does) with a warning, keeps waiting, and replays the same decision on another worker', async () => {
    const log: unknown[] = [];
    const logger: Logger = { ...silentLogger, warn: (obj, msg) => log.push({ ...(obj as object), msg }) };
    current = fleet({ workflows: [twoApprovals], logger });
    const w1 = await current.spawn();
    const { client, store } = current;
    const run = await client.start(twoApprovals, 'O-1');
    const suspended = () =>
      until(
        async () => (await client.describe(run.runId).catch(() => undefined))?.status === 'suspended',
        5_000,
        'the run waiting for its signal',
      );
    await suspended();

    // A wrongly typed payload by plain name: the client has no schema to check it with.
    await client.signal(run.runId, 'approval', { approved: 'no', by: 'eve' }, { signalId: 'bad-1' });
    await until(() => w1.events.some((e) => e.type === 'signal-refused'), 5_000, 'the refusal');
    expect(w1.events.filter((e) => e.type === 'signal-refused')).toEqual([
      {
        type: 'signal-refused',
        runId: run.runId,
        signal: 'approval',
        signalId: 'bad-1',
        issues: [expect.stringMatching(/^\$\.approved: /)],
      },
    ]);
    expect(refusedLogged(log)).toEqual([
      expect.objectContaining({ runId: run.runId, signal: 'approval', signalId: 'bad-1', seq: 0 }),
    ]);
    expect((refusedLogged(log)[0] as { msg: string }).msg).toContain('It was skipped and the wait goes on');
    // Not consumed, not journaled, and the run suspends again (the refused signal is not pending).
    await suspended();
    expect((await client.history(run.runId)).map((p) => p.entry.type)).not.toContain('SignalReceived');
    expect((await store.signals.read(run.runId)).map((s) => s.signalId)).toEqual(['bad-1']);

    // Another worker resumes the run: it skips bad-1 again and takes the valid one, transformed.
    await w1.worker.stop();
    const w2 = await current.spawn();
    await client.signal(run.runId, approval, { approved: true, by: '  ana ' }, { signalId: 'good-1' });
    await until(
      async () =>
        (await client.history(run.runId)).some(
          (p) => p.entry.type === 'SignalReceived' && p.entry.signalId === 'good-1',
        ),
      5_000,
      'the first approval journaled',
    );
    expect(w2.events.filter((e) => e.type === 'signal-refused').map((e) => e.type)).toEqual([
      'signal-refused',
    ]);
    await suspended();

    // The second wait: the first is replayed from the journal (its schema output), bad-1 skipped again.
    await client.signal(run.runId, 'approval', { approved: false, by: 'bob' }, { signalId: 'good-2' });
    expect(await run.result({ timeoutMs: 5_000 })).toBe('O-1 yes:ana no:bob');
    const received = (await client.history(run.runId))
      .map((p) => p.entry)
      .filter((e) => e.type === 'SignalReceived');
    expect(received).toEqual([
      expect.objectContaining({ seq: 0, signalId: 'good-1', payload: { approved: true, by: 'ana' } }),
      expect.objectContaining({ seq: 1, signalId: 'good-2', payload: { approved: false, by: 'bob' } }),
    ]);
  });

  it('client.signal with the definition refuses an invalid payload naming the signal and each issue, nothing sent, and sends the schema output', async () => {
    current = fleet({ workflows: [twoApprovals] });
    const { client, transport } = current;
    const error = await client
      .signal('run-1', approval, { approved: 'yes' as unknown as boolean, by: ' ' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: 'BATON_INVALID_INPUT', field: 'payload', signal: 'approval' });
    expect((error as InvalidInputError).issues).toEqual([
      expect.stringMatching(/^\$\.approved: /),
      expect.stringMatching(/^\$\.by: /),
    ]);
    expect((error as Error).message).toMatch(
      /^payload of signal 'approval' to run run-1 does not match its schema: \$\.approved: .*Fix the payload \(nothing was sent\)/,
    );
    expect(await transport.runQueue.fetch({ max: 10, expiresMs: 50 })).toEqual([]);
    await client.signal('run-1', approval, { approved: true, by: ' ana ' }, { signalId: 's1' });
    const [sent] = await transport.runQueue.fetch({ max: 10, expiresMs: 50 });
    expect(decodeMessage(sent!.data)).toMatchObject({
      kind: 'signal',
      payload: { approved: true, by: 'ana' },
    });
  });
});
