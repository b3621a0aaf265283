import { describe, expect, it } from 'vitest';
import type { KeptUpdate, UpdateRequest } from '../../adapter/contracts/updates.js';
import type { JournalEntry } from '../../shared/journal.js';
import { defineActivity, defineWorkflow } from '../../author/workflow.js';
import { defineUpdate } from '../../author/update.js';
import type { StandardSchemaV1 } from '../../author/standard-schema.js';
import { NonDeterminismError } from '../errors.js';
import { ReplayExecutor } from './replay-executor.js';
import type { ExecutorOptions } from './execution-host.js';
import { testHost, type TestHost } from './test-host.spec-helper.js';
import { UPDATE_REJECTED, UPDATE_UNKNOWN } from './updates.js';

/** A test host with an update store of its own: pending requests and kept outcomes, first wins. */
interface UpdateHost extends TestHost {
  requests: UpdateRequest[];
  kept: Map<string, KeptUpdate>;
}

function updateHost(requests: Array<Omit<UpdateRequest, 'requestedAt'>> = []): UpdateHost {
  const host = testHost() as UpdateHost;
  host.requests = requests.map((r) => ({ ...r, requestedAt: 0 }));
  host.kept = new Map();
  host.readUpdates = async () =>
    host.requests.filter((r) => !host.kept.has(r.updateId)).map((r) => ({ ...r }));
  host.settleUpdate = async (settlement) => {
    if (!host.kept.has(settlement.updateId))
      host.kept.set(settlement.updateId, { ...settlement, settledAt: 1 });
  };
  return host;
}

const types = (journal: readonly JournalEntry[]): string[] =>
  journal.map((e) => ('seq' in e ? `${e.type}#${e.seq}` : e.type));

/** A cart: items are added by update (each add charged by an activity), the run ends on 'checkout'. */
function cartWorkflow(charges: string[]) {
  const charge = defineActivity({
    name: 'charge',
    idempotent: false,
    run: (item: { sku: string; qty: number }) => {
      charges.push(`${item.sku}x${item.qty}`);
      return item.qty * 10;
    },
  });
  const addItem = defineUpdate<{ sku: string; qty: number }, { total: number }>('add_item', {
    validate: ({ qty }) => {
      if (qty < 1) throw new Error(`qty must be at least 1, got ${qty}`);
    },
  });
  const workflow = defineWorkflow({
    name: 'cart',
    version: 1,
    run: async (ctx) => {
      let total = 0;
      ctx.onUpdate(addItem, async (item) => {
        total += await ctx.run(charge, item);
        return { total };
      });
      await ctx.waitForSignal('checkout');
      return total;
    },
  });
  return { workflow, addItem };
}

async function execute(
  workflow: ExecutorOptions['workflow'],
  history: JournalEntry[],
  host: UpdateHost,
  options: { updateRequested?: boolean } = {},
) {
  const executor = new ReplayExecutor({
    workflow,
    input: null,
    runId: host.runId,
    history,
    host,
    ...options,
  });
  const outcome = await executor.run();
  return { outcome, journal: [...history, ...host.journal], executor };
}

describe('updates in the replay executor', () => {
  it('journals an accepted update, runs its handler and keeps its result', async () => {
    const charges: string[] = [];
    const { workflow } = cartWorkflow(charges);
    const host = updateHost([{ updateId: 'u1', name: 'add_item', args: { sku: 'A', qty: 2 } }]);
    const { outcome, journal } = await execute(workflow, [], host);
    expect(outcome).toEqual({ kind: 'suspended' });
    expect(charges).toEqual(['Ax2']);
    expect(host.kept.get('u1')?.outcome).toEqual({ status: 'completed', result: { total: 20 } });
    expect(types(journal)).toEqual([
      'SignalWaitStarted#0',
      'UpdateAccepted',
      'ActivityStarted#1',
      'ActivityCompleted#1',
      'UpdateCompleted',
    ]);
    expect(journal[1]).toMatchObject({ updateId: 'u1', name: 'add_item', args: { sku: 'A', qty: 2 } });
    expect(journal[4]).toMatchObject({ updateId: 'u1', result: { total: 20 } });
  });

  it('rejects an update its validator refuses without journaling anything of it', async () => {
    const charges: string[] = [];
    const { workflow } = cartWorkflow(charges);
    const host = updateHost([{ updateId: 'u0', name: 'add_item', args: { sku: 'A', qty: 0 } }]);
    const { journal } = await execute(workflow, [], host);
    expect(types(journal)).toEqual(['SignalWaitStarted#0']);
    expect(charges).toEqual([]);
    const kept = host.kept.get('u0')!.outcome;
    expect(kept).toMatchObject({
      status: 'rejected',
      error: { name: 'UpdateRejectedError', code: UPDATE_REJECTED },
    });
    expect(kept.status === 'rejected' && kept.error.message).toMatch(
      /update 'add_item' to run run-1 was rejected by its validator: qty must be at least 1, got 0/,
    );
  });

  it("runs the handler's validator with the workflow's state at hand", async () => {
    const closedCart = defineWorkflow({
      name: 'closing',
      version: 1,
      run: async (ctx) => {
        let closed = false;
        ctx.onUpdate('add_item', () => 'added', {
          validate: () => {
            if (closed) throw new Error('the cart is closed');
          },
        });
        await ctx.waitForSignal('checkout');
        closed = true;
        await ctx.waitForSignal('never');
      },
    });
    const open = updateHost([{ updateId: 'u1', name: 'add_item', args: null }]);
    await execute(closedCart, [], open);
    expect(open.kept.get('u1')?.outcome).toEqual({ status: 'completed', result: 'added' });
    // Checkout consumed: replayed, the workflow's state is closed before any request is decided.
    const checkout = updateHost();
    checkout.inbox.push({ signalId: 's1', name: 'checkout', payload: null, receivedAt: 0 });
    const waiting = await execute(closedCart, [], checkout);
    expect(waiting.outcome).toEqual({ kind: 'suspended' });
    const closed = updateHost([{ updateId: 'u2', name: 'add_item', args: null }]);
    const after = await execute(closedCart, waiting.journal, closed);
    expect(closed.kept.get('u2')?.outcome).toMatchObject({
      status: 'rejected',
      error: { message: expect.stringMatching(/rejected by its validator: the cart is closed/) },
    });
    expect(after.journal.some((e) => e.type === 'UpdateAccepted')).toBe(false);
  });

  it("rejects arguments that fail the update's schema, listing each issue, before any validator", async () => {
    const schema: StandardSchemaV1<unknown, { qty: number }> = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: (value) =>
          typeof (value as { qty?: unknown })?.qty === 'number'
            ? { value: value as { qty: number } }
            : { issues: [{ message: 'must be a number', path: ['qty'] }] },
      },
    };
    let validated = 0;
    const setQty = defineUpdate<{ qty: number }, number>('set_qty', {
      schema,
      validate: () => void validated++,
    });
    const workflow = defineWorkflow({
      name: 'schema',
      version: 1,
      run: async (ctx) => {
        ctx.onUpdate(setQty, ({ qty }) => qty);
        await ctx.waitForSignal('done');
      },
    });
    const host = updateHost([
      { updateId: 'bad', name: 'set_qty', args: { qty: 'two' } },
      { updateId: 'good', name: 'set_qty', args: { qty: 2 } },
    ]);
    const { journal } = await execute(workflow, [], host);
    expect(host.kept.get('bad')?.outcome).toMatchObject({
      status: 'rejected',
      error: {
        code: UPDATE_REJECTED,
        message: expect.stringMatching(/do not match the update's schema: \$\.qty: must be a number/),
      },
    });
    expect(host.kept.get('good')?.outcome).toEqual({ status: 'completed', result: 2 });
    expect(validated).toBe(1);
    expect(
      journal.filter((e) => e.type === 'UpdateAccepted').map((e) => 'updateId' in e && e.updateId),
    ).toEqual(['good']);
  });

  it('rejects an update name the workflow has no handler for, naming those it has', async () => {
    const { workflow } = cartWorkflow([]);
    const host = updateHost([{ updateId: 'x', name: 'remove_item', args: null }]);
    const { journal } = await execute(workflow, [], host);
    expect(types(journal)).toEqual(['SignalWaitStarted#0']);
    expect(host.kept.get('x')?.outcome).toMatchObject({
      status: 'rejected',
      error: {
        code: UPDATE_UNKNOWN,
        message: expect.stringMatching(/has no handler for update 'remove_item'; it handles 'add_item'/),
      },
    });
  });

  it('reads requests of a run without handlers only when woken for one, and refuses them as unknown', async () => {
    const workflow = defineWorkflow({
      name: 'plain',
      version: 1,
      run: async (ctx) => void (await ctx.waitForSignal('done')),
    });
    const unasked = updateHost([{ updateId: 'x', name: 'anything', args: null }]);
    await execute(workflow, [], unasked);
    expect(unasked.kept.size).toBe(0);
    const woken = updateHost([{ updateId: 'x', name: 'anything', args: null }]);
    await execute(workflow, [], woken, { updateRequested: true });
    expect(woken.kept.get('x')?.outcome).toMatchObject({
      status: 'rejected',
      error: { code: UPDATE_UNKNOWN },
    });
  });

  it('handles again on replay an update accepted but not completed, without re-running journaled steps', async () => {
    const charges: string[] = [];
    const { workflow } = cartWorkflow(charges);
    const first = updateHost([{ updateId: 'u1', name: 'add_item', args: { sku: 'A', qty: 3 } }]);
    const full = await execute(workflow, [], first);
    expect(charges).toEqual(['Ax3']);
    // The owner died after the activity's result was journaled, before the outcome was kept.
    const cut = full.journal.slice(
      0,
      full.journal.findIndex((e) => e.type === 'UpdateCompleted'),
    );
    const again = updateHost([{ updateId: 'u1', name: 'add_item', args: { sku: 'A', qty: 3 } }]);
    const resumed = await execute(workflow, cut, again);
    expect(resumed.outcome).toEqual({ kind: 'suspended' });
    expect(charges).toEqual(['Ax3']);
    expect(again.kept.get('u1')?.outcome).toEqual({ status: 'completed', result: { total: 30 } });
    expect(types(again.journal)).toEqual(['UpdateCompleted']);
    // And the handler's effect on the workflow's state is there again: checkout returns it.
    const checkout = updateHost();
    checkout.inbox.push({ signalId: 's1', name: 'checkout', payload: null, receivedAt: 0 });
    const ended = await execute(workflow, resumed.journal, checkout);
    expect(ended.outcome).toEqual({ kind: 'completed', result: 30 });
    expect(charges).toEqual(['Ax3']);
  });

  it('re-runs an in-doubt step of an update whose owner died mid-activity, once, with the same key', async () => {
    const charges: string[] = [];
    const { workflow } = cartWorkflow(charges);
    const full = await execute(
      workflow,
      [],
      updateHost([{ updateId: 'u1', name: 'add_item', args: { sku: 'A', qty: 1 } }]),
    );
    // Died after ActivityStarted: the step is in doubt and runs again (no reconcile hook).
    const cut = full.journal.slice(
      0,
      full.journal.findIndex((e) => e.type === 'ActivityCompleted'),
    );
    const again = updateHost([{ updateId: 'u1', name: 'add_item', args: { sku: 'A', qty: 1 } }]);
    await execute(workflow, cut, again);
    expect(charges).toEqual(['Ax1', 'Ax1']);
    expect(again.kept.get('u1')?.outcome).toEqual({ status: 'completed', result: { total: 10 } });
    expect(types(again.journal)).toEqual(['ActivityCompleted#1', 'UpdateCompleted']);
  });

  it('applies an update id once, however often the store lists it', async () => {
    const charges: string[] = [];
    const { workflow } = cartWorkflow(charges);
    const request = { updateId: 'u1', name: 'add_item', args: { sku: 'A', qty: 1 } };
    const host = updateHost([request, { ...request }]);
    const first = await execute(workflow, [], host);
    expect(charges).toEqual(['Ax1']);
    // A store that still lists it (its settle was lost): the journal's acceptance wins.
    const stale = updateHost([request]);
    const replayed = await execute(
      workflow,
      first.journal.filter((e) => e.type !== 'UpdateCompleted'),
      stale,
    );
    expect(charges).toEqual(['Ax1']);
    expect(replayed.journal.filter((e) => e.type === 'UpdateAccepted')).toHaveLength(1);
    const listedAgain = updateHost([request]);
    const third = await execute(workflow, replayed.journal, listedAgain);
    expect(charges).toEqual(['Ax1']);
    expect(third.journal.filter((e) => e.type === 'UpdateAccepted')).toHaveLength(1);
    expect(listedAgain.journal).toEqual([]);
  });

  it('starts each handler where it started live, so parallel updates replay to the same state', async () => {
    const order: string[] = [];
    const step = defineActivity({ name: 'step', run: (label: string) => (order.push(label), label) });
    const note = defineUpdate<string, string[]>('note');
    const workflow = defineWorkflow({
      name: 'notes',
      version: 1,
      run: async (ctx) => {
        const notes: string[] = [];
        ctx.onUpdate(note, async (text) => {
          notes.push(await ctx.run(step, `${text}-1`));
          notes.push(await ctx.run(step, `${text}-2`));
          return [...notes];
        });
        notes.push(await ctx.run(step, 'main'));
        await ctx.waitForSignal('done');
        return notes;
      },
    });
    const host = updateHost([
      { updateId: 'a', name: 'note', args: 'a' },
      { updateId: 'b', name: 'note', args: 'b' },
    ]);
    host.inbox.push({ signalId: 's', name: 'done', payload: null, receivedAt: 0 });
    const live = await execute(workflow, [], host);
    expect(live.outcome.kind).toBe('completed');
    const result = (live.outcome as { result: string[] }).result;
    expect([...result].sort()).toEqual(['a-1', 'a-2', 'b-1', 'b-2', 'main']);
    order.length = 0;
    const replay = await execute(
      workflow,
      live.journal.filter((e) => e.type !== 'RunCompleted'),
      updateHost(),
    );
    expect(replay.outcome).toEqual(live.outcome);
    expect(order).toEqual([]);
  });

  it('ends a run whose workflow returned only once its accepted handlers settled', async () => {
    let releaseMain!: () => void;
    let releaseHandler!: () => void;
    const mainGate = new Promise<void>((resolve) => (releaseMain = resolve));
    const handlerGate = new Promise<void>((resolve) => (releaseHandler = resolve));
    const fast = defineActivity({ name: 'fast', run: async () => (await mainGate, 'main') });
    const slow = defineActivity({ name: 'slow', run: async () => (await handlerGate, 'late') });
    const workflow = defineWorkflow({
      name: 'quick',
      version: 1,
      run: async (ctx) => {
        ctx.onUpdate('wait', () => ctx.run(slow, null));
        return ctx.run(fast, null);
      },
    });
    const host = updateHost([{ updateId: 'w', name: 'wait', args: null }]);
    const executor = new ReplayExecutor({ workflow, input: null, runId: host.runId, history: [], host });
    const running = executor.run();
    // The workflow returns first; its accepted update is still running.
    setTimeout(releaseMain, 40);
    setTimeout(releaseHandler, 120);
    expect(await running).toEqual({ kind: 'completed', result: 'main' });
    expect(host.kept.get('w')?.outcome).toEqual({ status: 'completed', result: 'late' });
    expect(types(host.journal)).toEqual([
      'UpdateAccepted',
      'ActivityCompleted#0',
      'ActivityCompleted#1',
      'UpdateCompleted',
    ]);
  });

  it("keeps a handler failure as the update's outcome and goes on", async () => {
    const workflow = defineWorkflow({
      name: 'failing',
      version: 1,
      run: async (ctx) => {
        ctx.onUpdate('boom', () => {
          throw new Error('no stock');
        });
        await ctx.waitForSignal('done');
      },
    });
    const host = updateHost([{ updateId: 'b', name: 'boom', args: null }]);
    const { outcome, journal } = await execute(workflow, [], host);
    expect(outcome).toEqual({ kind: 'suspended' });
    expect(host.kept.get('b')?.outcome).toMatchObject({ status: 'failed', error: { message: 'no stock' } });
    expect(journal.at(-1)).toMatchObject({ type: 'UpdateCompleted', error: { message: 'no stock' } });
  });

  it('refuses a validator that answers with a promise', async () => {
    const workflow = defineWorkflow({
      name: 'async-validator',
      version: 1,
      run: async (ctx) => {
        ctx.onUpdate('x', () => 1, { validate: (async () => undefined) as unknown as () => void });
        await ctx.waitForSignal('done');
      },
    });
    const host = updateHost([{ updateId: 'x', name: 'x', args: null }]);
    await execute(workflow, [], host);
    expect(host.kept.get('x')?.outcome).toMatchObject({
      status: 'rejected',
      error: { message: expect.stringMatching(/a validator must be synchronous/) },
    });
  });

  it('fails with NonDeterminismError when a journaled update has no handler on replay', async () => {
    const { workflow } = cartWorkflow([]);
    const full = await execute(
      workflow,
      [],
      updateHost([{ updateId: 'u', name: 'add_item', args: { sku: 'A', qty: 1 } }]),
    );
    const without = defineWorkflow({
      name: 'cart',
      version: 1,
      run: async (ctx) => void (await ctx.waitForSignal('checkout')),
    });
    const { outcome } = await execute(without, full.journal, updateHost());
    expect(outcome).toMatchObject({ kind: 'failed', nonDeterminism: true });
    expect(outcome.kind === 'failed' && outcome.error.message).toMatch(
      /UpdateAccepted of update 'add_item' \(id u\)/,
    );
    expect(new NonDeterminismError('r', 1, 'a', 'b').code).toBe('BATON_NON_DETERMINISM');
  });
});
