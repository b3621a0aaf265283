/**
 * What a run that continues as new hands on, through the worker and the client (memory adapters;
 * NATS + Redis: tests/system/src/continue-as-new.int.spec.ts): signals it never took and signals
 * sent to it afterwards are taken by its successors, each once, in the order they were sent,
 * however the chain is addressed and whatever crashes between its steps; update requests it never
 * accepted are answered by the successor to the caller that asked the first run; its durable
 * promises are refused after the continuation, naming the successor.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineSignal, defineUpdate, defineWorkflow, RunStateError } from '@baton/core';
import {
  CONTINUED_AS,
  decodeEntries,
  isContinuedAsNew,
  resolvePayloadProtection,
  sendRunMessage,
  wakeMessage,
} from '@baton/core/runtime';
import { fleet, until, type Fleet } from './fleet.spec-helper.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

const note = defineSignal<string>('note');
const addItem = defineUpdate<string, string[]>('add_item');

/** Holds the first run of a chain in an activity until released: signals pile up in its inbox meanwhile. */
function gate() {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const hold = defineActivity({ name: 'can_hold', run: async () => void (await released) });
  return { hold, release: () => release() };
}

/**
 * Takes one note per run and continues until it has `rounds` of them; the first run waits at the
 * gate first. Runs after the first answer `add_item` (the first has no handler yet: a request to it
 * waits in the store, never accepted).
 */
function noteTaker(hold: ReturnType<typeof gate>['hold'], name = 'can_notes') {
  return defineWorkflow({
    name,
    version: 1,
    run: async (ctx, input: { seen: string[]; rounds: number }) => {
      const items: string[] = [];
      if (input.seen.length > 0) ctx.onUpdate(addItem, (item) => (items.push(item), [...input.seen, item]));
      else await ctx.run(hold, null);
      const seen = [...input.seen, await ctx.waitForSignal(note)];
      if (seen.length < input.rounds) return ctx.continueAsNew({ seen, rounds: input.rounds });
      return seen;
    },
  });
}

/** The run ids of the chain from `runId`, as the store links them. */
async function chainOf(f: Fleet, runId: string): Promise<string[]> {
  const ids = [runId];
  for (;;) {
    const run = await f.store.runs.get(ids.at(-1)!);
    if (!run || !isContinuedAsNew(run.result)) return ids;
    ids.push(run.result[CONTINUED_AS].runId);
  }
}

/** The signal ids each run of the chain took, from its journal. */
async function takenBy(f: Fleet, ids: string[]): Promise<string[][]> {
  return Promise.all(
    ids.map(async (id) =>
      (await f.journal.journal.read(id, 0))
        .flatMap((r) => decodeEntries(r.data, id))
        .flatMap((e) => (e.type === 'SignalReceived' ? [e.signalId] : [])),
    ),
  );
}

/**
 * Sends the note `text` (signal id `sig-<text>` unless given) to `runId` and waits until a run of
 * the chain from `first` holds it. Two messages sent at once may be handled in either order (as on
 * any bus with competing consumers), so a note that must come after another is sent once that one
 * has landed.
 */
async function sendNote(f: Fleet, runId: string, text: string, first = runId, signalId = `sig-${text}`) {
  await f.client.signal(runId, note, text, { signalId });
  await until(
    async () => {
      for (const id of await chainOf(f, first)) {
        if ((await f.store.signals.read(id)).some((s) => s.signalId === signalId)) return true;
      }
      return false;
    },
    5_000,
    `${signalId} to land`,
  );
}

describe('continue-as-new carries over', () => {
  it('signals sent before and after the continuation are taken once each, in order, by the successors', async () => {
    const { hold, release } = gate();
    const workflow = noteTaker(hold);
    const f = (current = fleet({ workflows: [workflow] }));
    await f.spawn();
    const run = await f.client.start(workflow, { seen: [], rounds: 4 });
    // Before: both wait in the first run's inbox while it is held; it takes one and continues.
    await sendNote(f, run.runId, 'a');
    await sendNote(f, run.runId, 'b');
    release();
    await until(
      async () => (await f.store.runs.get(run.runId))?.status === 'completed',
      5_000,
      'the first run to end',
    );
    // After: addressed to the first run, which has continued; then a repeat of 'c' (a redelivery),
    // which must not count as a note of its own.
    await f.client.signal(run.runId, note, 'c', { signalId: 'sig-c' });
    await f.client.signal(run.runId, note, 'c', { signalId: 'sig-c' });
    // 'd' goes to the chain's newest run once 'c' is taken (two messages sent at once may be
    // handled in either order, with or without a continuation in between).
    await until(
      async () => (await takenBy(f, await chainOf(f, run.runId))).flat().includes('sig-c'),
      5_000,
      "'c' to be taken",
    );
    const ids = await chainOf(f, run.runId);
    await f.client.signal(ids.at(-1)!, note, 'd', { signalId: 'sig-d' });
    expect(await run.result({ timeoutMs: 10_000 })).toEqual(['a', 'b', 'c', 'd']);

    const chain = await chainOf(f, run.runId);
    expect(chain).toHaveLength(4);
    expect(await takenBy(f, chain)).toEqual([['sig-a'], ['sig-b'], ['sig-c'], ['sig-d']]);
    // The first run kept only what came before its continuation.
    expect((await f.store.signals.read(run.runId)).map((s) => s.signalId)).toEqual(['sig-a', 'sig-b']);
    expect((await f.store.runs.get(run.runId))?.continuedAs).toBe(chain[1]);
  });

  it('a worker that dies after marking the continuation, before carrying, loses and doubles nothing', async () => {
    const { hold, release } = gate();
    const workflow = noteTaker(hold);
    const f = (current = fleet({ workflows: [workflow] }));
    let frozen: string | undefined;
    const doomed = await f.spawn({
      faults: async (point, info) => {
        if (point !== 'continue-marked' || frozen !== undefined) return;
        frozen = info.runId;
        doomed.crash();
        await new Promise(() => undefined);
      },
    });
    const run = await f.client.start(workflow, { seen: [], rounds: 3 });
    await sendNote(f, run.runId, 'a');
    await sendNote(f, run.runId, 'b');
    release();
    await until(() => frozen !== undefined, 5_000, 'the doomed worker to mark the continuation');
    // Sent while the first run is marked and nobody carries its inbox: it waits for the hand-over.
    await f.client.signal(run.runId, note, 'c', { signalId: 'sig-c' });
    await f.spawn();
    expect(await run.result({ timeoutMs: 15_000 })).toEqual(['a', 'b', 'c']);
    const chain = await chainOf(f, run.runId);
    expect(await takenBy(f, chain)).toEqual([['sig-a'], ['sig-b'], ['sig-c']]);
  });

  it('a worker that dies after carrying and starting the successor, before recording the end, doubles nothing', async () => {
    const { hold, release } = gate();
    const workflow = noteTaker(hold);
    const f = (current = fleet({ workflows: [workflow] }));
    let frozen: string | undefined;
    const doomed = await f.spawn({
      faults: async (point, info) => {
        if (point !== 'before-finish' || frozen !== undefined) return;
        frozen = info.runId;
        doomed.crash();
        await new Promise(() => undefined);
      },
    });
    const run = await f.client.start(workflow, { seen: [], rounds: 3 });
    for (const n of ['a', 'b', 'c']) await sendNote(f, run.runId, n);
    release();
    await until(() => frozen !== undefined, 5_000, 'the doomed worker to reach the end of the first run');
    await f.spawn();
    expect(await run.result({ timeoutMs: 15_000 })).toEqual(['a', 'b', 'c']);
    const chain = await chainOf(f, run.runId);
    expect(await takenBy(f, chain)).toEqual([['sig-a'], ['sig-b'], ['sig-c']]);
  });

  it('seals what it carries for the successor when payloads are encrypted', async () => {
    const { hold, release } = gate();
    const workflow = noteTaker(hold, 'can_sealed_notes');
    const protection = resolvePayloadProtection({
      encryptionKeys: `k1:${randomBytes(32).toString('base64')}`,
    });
    const f = (current = fleet({ workflows: [workflow], payloadProtection: protection }));
    await f.spawn();
    const run = await f.client.start(workflow, { seen: [], rounds: 2 });
    await sendNote(f, run.runId, 'secret-a', run.runId, 'sig-a');
    await sendNote(f, run.runId, 'secret-b', run.runId, 'sig-b');
    release();
    expect(await run.result({ timeoutMs: 10_000 })).toEqual(['secret-a', 'secret-b']);
    const [, successor] = await chainOf(f, run.runId);
    const inbox = await f.store.signals.read(successor!);
    expect(inbox.map((s) => s.signalId)).toEqual(['sig-b']);
    expect(JSON.stringify(inbox)).not.toContain('secret-b');
  });

  it('an update the run never accepted is answered by its successor, to the caller that asked the first run', async () => {
    const { hold, release } = gate();
    const workflow = noteTaker(hold, 'can_updates');
    const f = (current = fleet({ workflows: [workflow] }));
    await f.spawn();
    const run = await f.client.start(workflow, { seen: [], rounds: 3 });
    await until(async () => (await f.store.runs.get(run.runId))?.status === 'running', 5_000, 'the run held');
    // The first run has no handler: the request waits in the store while the run is held.
    const before = run.update(addItem, 'early', { updateId: 'up-early', timeoutMs: 10_000 });
    await until(
      async () => (await f.store.updates.pending(run.runId)).length === 1,
      5_000,
      'the request kept',
    );
    await f.client.signal(run.runId, note, 'a', { signalId: 'sig-a' });
    release();
    expect(await before).toEqual(['a', 'early']);
    const [, second] = await chainOf(f, run.runId);
    expect(await f.store.updates.outcome(run.runId, 'up-early')).toBeUndefined();
    expect((await f.store.updates.outcome(second!, 'up-early'))?.outcome).toEqual({
      status: 'completed',
      result: ['a', 'early'],
    });
    // Sent to the first run after it continued: it goes on to the live run.
    expect(await f.client.update(run.runId, addItem, 'late', { timeoutMs: 10_000 })).toEqual(['a', 'late']);
    // The same id again, to the first run: the kept answer, not a second application.
    expect(await f.client.update(run.runId, addItem, 'early', { updateId: 'up-early' })).toEqual([
      'a',
      'early',
    ]);
    await sendNote(f, run.runId, 'b');
    await sendNote(f, run.runId, 'c');
    expect(await run.result({ timeoutMs: 10_000 })).toEqual(['a', 'b', 'c']);
  });

  it('a cancel that reaches a run while it hands over goes on to its successor', async () => {
    const waiter = defineWorkflow({
      name: 'can_cancelled',
      version: 1,
      run: async (ctx) => ctx.waitForSignal(note),
    });
    const f = (current = fleet({ workflows: [waiter] }));
    await f.spawn();
    // The first run's owner, played by hand: its cancels closed and its continuation marked, its
    // end not yet recorded; its successor created by the carry-over, not yet started.
    const [first, second] = ['can-handing-over', 'can-handed-to'];
    for (const runId of [first, second]) {
      await f.store.runs.create({
        runId,
        workflow: 'can_cancelled',
        version: 1,
        input: null,
        idempotencyKey: null,
      });
    }
    const lease = await f.store.leases.acquire(first, 'by-hand', 60_000);
    if (!lease.ok) throw new Error(`${first} not acquired`);
    await f.store.control.closeCancels(first, lease.epoch);
    await f.store.runs.continueAs(first, lease.epoch, second);
    await f.client.cancel(first, 'stop the chain');
    // The successor starts (a wake stands in for its start message) and ends cancelled.
    await sendRunMessage(f.transport.runQueue, wakeMessage(second, 'signal'));
    await until(
      async () => (await f.store.runs.get(second))?.status === 'cancelled',
      5_000,
      'the successor cancelled',
    );
    expect((await f.store.runs.get(second))?.error).toMatchObject({ message: 'stop the chain' });
  });

  it('refuses a completion of a promise of the continued run, naming its successor', async () => {
    const tokens = new Map<string, string>();
    const hand = defineActivity({
      name: 'can_hand_token',
      run: (token: string, io) => void tokens.set(io.runId, token),
    });
    const workflow = defineWorkflow({
      name: 'can_promises',
      version: 1,
      run: async (ctx, input: { round: number }) => {
        const approval = ctx.promise<boolean>();
        await ctx.run(hand, approval.token);
        if (input.round === 0) return ctx.continueAsNew({ round: 1 });
        return approval.value;
      },
    });
    const f = (current = fleet({ workflows: [workflow] }));
    await f.spawn();
    const run = await f.client.start(workflow, { round: 0 });
    await until(
      async () => (await f.store.runs.get(run.runId))?.status === 'completed',
      5_000,
      'the first run to end',
    );
    const [, second] = await chainOf(f, run.runId);
    await until(() => tokens.has(second!), 5_000, 'the successor’s token');
    const refused = f.client.promises.resolve(tokens.get(run.runId)!, true);
    await expect(refused).rejects.toBeInstanceOf(RunStateError);
    await expect(refused).rejects.toThrow(new RegExp(`continued as new as run ${second}`));
    expect(await f.store.promises.get(tokens.get(run.runId)!)).toMatchObject({ state: 'pending' });
    // The successor's own promise completes as any.
    expect(await f.client.promises.resolve(tokens.get(second!)!, true)).toEqual({ state: 'resolved' });
    expect(await run.result({ timeoutMs: 5_000 })).toBe(true);
  });
});
