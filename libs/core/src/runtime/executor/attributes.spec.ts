/**
 * ctx.setAttributes in the replay executor: written to the store, then journaled; replayed without
 * writing; refused before it takes a step number; a failed store write stops the run.
 */
import { describe, expect, it } from 'vitest';
import type { AttributeChanges } from '../../shared/attributes.js';
import type { JournalEntry } from '../../shared/journal.js';
import { defineActivity, defineWorkflow } from '../../author/workflow.js';
import { execute, testHost, type TestHost } from './test-host.spec-helper.js';
import { ReplayExecutor } from './replay-executor.js';

/** A test host that records the store writes of setAttributes, in order with the journal. */
function attributeHost(): TestHost & { writes: AttributeChanges[]; order: string[] } {
  const host = testHost() as TestHost & { writes: AttributeChanges[]; order: string[] };
  host.writes = [];
  host.order = [];
  const append = host.append.bind(host);
  host.append = async (entries, options) => {
    await append(entries, options);
    for (const entry of entries) host.order.push(`journal:${entry.type}`);
  };
  host.setAttributes = async (changes) => {
    await Promise.resolve();
    host.writes.push(changes);
    host.order.push('store');
  };
  return host;
}

const stepTypes = (journal: JournalEntry[]): string[] =>
  journal.map((e) => ('seq' in e ? `${e.type}#${e.seq}` : e.type));

const lookup = defineActivity({
  name: 'lookup',
  run: (id: string) => ({ tier: id === '42' ? 'gold' : 'basic' }),
});

const order = defineWorkflow({
  name: 'order',
  version: 1,
  run: async (ctx, input: { customerId: string }) => {
    await ctx.setAttributes({ customerId: input.customerId });
    const customer = await ctx.run(lookup, input.customerId);
    await ctx.setAttributes({ tier: customer.tier, total: 12.5, rush: false });
    return customer.tier;
  },
});

describe('ctx.setAttributes', () => {
  it('writes the store, then journals the change as a step of its own', async () => {
    const host = attributeHost();
    const { outcome, journal } = await execute(order, { customerId: '42' }, [], host);
    expect(outcome).toEqual({ kind: 'completed', result: 'gold' });
    expect(stepTypes(journal)).toEqual(['AttributesSet#0', 'ActivityCompleted#1', 'AttributesSet#2']);
    expect(host.writes).toEqual([
      { customerId: { type: 'keyword', value: '42' } },
      {
        tier: { type: 'keyword', value: 'gold' },
        total: { type: 'number', value: 12.5 },
        rush: { type: 'boolean', value: false },
      },
    ]);
    // Each change is in the store before its entry is journaled.
    expect(host.order).toEqual([
      'store',
      'journal:AttributesSet',
      'journal:ActivityCompleted',
      'store',
      'journal:AttributesSet',
    ]);
    expect(journal[0]).toMatchObject({ type: 'AttributesSet', attributes: { customerId: { value: '42' } } });
  });

  it('replays a journaled change without writing the store again', async () => {
    const first = await execute(order, { customerId: '42' }, [], attributeHost());
    const host = attributeHost();
    const replay = await execute(order, { customerId: '42' }, first.journal, host);
    expect(replay.outcome).toEqual({ kind: 'completed', result: 'gold' });
    expect(host.writes).toEqual([]);
    expect(host.journal).toEqual([]);
  });

  it('writes again after a crash between the store write and the journal (same values)', async () => {
    const first = await execute(order, { customerId: '42' }, [], attributeHost());
    // The crash: the second change reached the store, its entry never the journal.
    const cut = first.journal.slice(0, 2);
    const host = attributeHost();
    const resumed = await execute(order, { customerId: '42' }, cut, host);
    expect(resumed.outcome).toEqual({ kind: 'completed', result: 'gold' });
    expect(host.writes).toEqual([(first.host as ReturnType<typeof attributeHost>).writes[1]]);
    expect(stepTypes(host.journal)).toEqual(['AttributesSet#2']);
  });

  it('refuses a bad call before it takes a step number, the same on every replay', async () => {
    const wf = defineWorkflow({
      name: 'bad-attrs',
      version: 1,
      run: async (ctx) => {
        const refused = await ctx.setAttributes({ 'bad name': 'x' }).catch((err: Error) => err.message);
        const value = await ctx.run(lookup, '7');
        return { refused, value };
      },
    });
    const host = attributeHost();
    const { outcome, journal } = await execute(wf, null, [], host);
    expect(outcome).toMatchObject({
      kind: 'completed',
      result: {
        refused: expect.stringMatching(/ctx\.setAttributes: attribute 'bad name' is not a valid name/),
      },
    });
    expect(stepTypes(journal)).toEqual(['ActivityCompleted#0']);
    expect(host.writes).toEqual([]);
    const replay = await execute(wf, null, journal, attributeHost());
    expect(replay.outcome).toEqual(outcome);
  });

  it('holds a declared workflow to its names and types, and a time declared so to ISO strings', async () => {
    const wf = defineWorkflow({
      name: 'declared',
      version: 1,
      attributes: { customerId: 'keyword', placedAt: 'time' },
      run: async (ctx) => {
        await ctx.setAttributes({ customerId: '9', placedAt: '2026-11-25T10:00:00Z' });
        // An undeclared name is refused at run time too (the cast stands for untyped code).
        return ctx.setAttributes({ tier: 'gold' } as never).catch((err: Error) => err.message);
      },
    });
    const host = attributeHost();
    const { outcome } = await execute(wf, null, [], host);
    expect(outcome).toMatchObject({
      kind: 'completed',
      result: expect.stringMatching(
        /attribute 'tier' is not declared by the workflow; its attributes are customerId, placedAt/,
      ),
    });
    expect(host.writes).toEqual([
      {
        customerId: { type: 'keyword', value: '9' },
        placedAt: { type: 'time', value: Date.parse('2026-11-25T10:00:00Z') },
      },
    ]);
  });

  it('counts the run’s attributes over its calls against the limit of 20', async () => {
    const wf = defineWorkflow({
      name: 'many',
      version: 1,
      run: async (ctx) => {
        await ctx.setAttributes(Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`a${i}`, i])));
        await ctx.setAttributes({ a0: null, a1: null });
        await ctx.setAttributes(Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`b${i}`, true])));
        return ctx.setAttributes({ c: 'one too many' }).catch((err: Error) => err.message);
      },
    });
    const { outcome } = await execute(wf, null, [], attributeHost());
    expect(outcome).toMatchObject({
      result: expect.stringMatching(/would hold 21 attributes; the limit is 20/),
    });
  });

  it('stops the run when the store refuses the write (a fenced epoch), journaling nothing', async () => {
    const host = attributeHost();
    const fenced = Object.assign(new Error('fenced'), { name: 'FencedWriteError' });
    host.setAttributes = () => Promise.reject(fenced);
    const executor = new ReplayExecutor({
      workflow: order,
      input: { customerId: '1' },
      runId: 'run-1',
      history: [],
      host,
    });
    expect(await executor.run()).toEqual({ kind: 'stopped', reason: 'aborted', cause: fenced });
    expect(host.journal).toEqual([]);
  });

  it('fails the run with a clear error on a host that writes nothing', async () => {
    const { outcome } = await execute(order, { customerId: '1' }, [], testHost());
    expect(outcome).toMatchObject({
      kind: 'failed',
      error: {
        code: 'BATON_ATTRIBUTES_UNSUPPORTED',
        message: expect.stringMatching(/needs a host that writes to a store/),
      },
    });
  });

  it('stops with NonDeterminismError when the code no longer sets attributes at a recorded step', async () => {
    const first = await execute(order, { customerId: '42' }, [], attributeHost());
    const changed = defineWorkflow({
      name: 'order',
      version: 1,
      run: async (ctx, input: { customerId: string }) => ctx.run(lookup, input.customerId),
    });
    const { outcome } = await execute(changed, { customerId: '42' }, first.journal, attributeHost());
    expect(outcome).toMatchObject({ kind: 'failed', nonDeterminism: true });
    expect((outcome as { error: { message: string } }).error.message).toMatch(/attributes/);
  });
});
