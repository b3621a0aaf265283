/**
 * carry-over.ts on the memory adapters: what a continuing run carries to its successor (signals it
 * never took, update requests it never accepted, each resealed for the successor and once only,
 * however often the carry is repeated), and a signal's way along a chain of continued runs (to the
 * first run that keeps it, a repeat stopping where it landed, waiting while a run hands over,
 * bounded in length). The worker's own use of both: worker-continue-as-new-carry.spec.ts.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import {
  CONTINUED_AS,
  continuationKey,
  isSealedValue,
  openUpdateOutcome,
  openValue,
  resolvePayloadProtection,
  sealValue,
  type ContinuedAsNew,
  type JournalEntry,
  type PayloadProtection,
} from '@baton/core/runtime';
import { silentLogger } from '../logger.js';
import { CONTINUED_AS_NEW_CODE, carryToSuccessor, deliverAlongChain } from './carry-over.js';

const PLAIN = resolvePayloadProtection({});
const SEALED = resolvePayloadProtection({ encryptionKeys: `k1:${randomBytes(32).toString('base64')}` });

let counter = 0;
const newId = (label: string): string => `${label}-${++counter}-${randomBytes(3).toString('hex')}`;

async function newRun(store: Store, runId = newId('run')) {
  await store.runs.create({ runId, workflow: 'loop', version: 1, input: null, idempotencyKey: null });
  const lease = await store.leases.acquire(runId, 'w1', 30_000);
  if (!lease.ok) throw new Error(`could not acquire ${runId}`);
  return { runId, epoch: lease.epoch };
}

/** `length` runs, each but the last continued as the next and finished; the last one live. */
async function chainOf(store: Store, length: number): Promise<string[]> {
  const ids = Array.from({ length }, () => newId('link'));
  for (const [i, runId] of ids.entries()) {
    const { epoch } = await newRun(store, runId);
    const next = ids[i + 1];
    if (next === undefined) break;
    await store.runs.continueAs(runId, epoch, next);
    await store.runs.finish(runId, epoch, { status: 'completed', result: resultNaming(next) });
  }
  return ids;
}

function resultNaming(successor: string): ContinuedAsNew {
  return { [CONTINUED_AS]: { runId: successor, workflow: 'loop', version: 1, input: { round: 2 } } };
}

const signal = (runId: string, signalId: string, payload: unknown = 'hello') => ({
  runId,
  signalId,
  name: 'note',
  payload,
});

describe('deliverAlongChain', () => {
  it('delivers to a live run, and wakes it when it waits for the name', async () => {
    const store = memoryStore();
    const { runId, epoch } = await newRun(store);
    await store.leases.suspend({ runId, epoch, wakeAt: null, signals: ['note'], consumedSignalIds: [] });
    expect(await deliverAlongChain(store, PLAIN, signal(runId, 's1'), 100)).toEqual({
      kind: 'delivered',
      runId,
      wake: true,
      hops: 0,
    });
  });

  it('goes along a chain of continued runs to the live one, sealed for each run on the way', async () => {
    const store = memoryStore();
    const ids = await chainOf(store, 4);
    const payload = sealValue({ text: 'secret' }, ids[0]!, 'signal payload', SEALED);
    const found = await deliverAlongChain(store, SEALED, signal(ids[0]!, 's1', payload), 100);
    expect(found).toEqual({ kind: 'delivered', runId: ids[3], wake: false, hops: 3 });
    for (const id of ids.slice(0, 3)) expect(await store.signals.read(id)).toEqual([]);
    const [kept] = await store.signals.read(ids[3]!);
    expect(isSealedValue(kept?.payload)).toBe(true);
    expect(openValue(kept?.payload, ids[3]!, 'signal payload', SEALED)).toEqual({ text: 'secret' });
  });

  it('stops a repeat at the run that holds it, even once that run has continued', async () => {
    const store = memoryStore();
    const ids = await chainOf(store, 2);
    // The first delivery landed at ids[1]; then ids[1] continued as ids[2].
    expect((await deliverAlongChain(store, PLAIN, signal(ids[0]!, 'once'), 100)).kind).toBe('delivered');
    const third = newId('third');
    const lease = await store.leases.get(ids[1]!);
    await store.runs.continueAs(ids[1]!, lease!.epoch, third);
    await store.runs.finish(ids[1]!, lease!.epoch, { status: 'completed', result: resultNaming(third) });
    await newRun(store, third);
    expect(await deliverAlongChain(store, PLAIN, signal(ids[0]!, 'once'), 100)).toEqual({
      kind: 'delivered',
      runId: ids[1],
      wake: false,
      hops: 1,
    });
    expect(await store.signals.read(third)).toEqual([]);
  });

  it('waits while a run hands over, and names an unknown successor', async () => {
    const store = memoryStore();
    const { runId, epoch } = await newRun(store);
    await store.runs.continueAs(runId, epoch, 'ghost-successor');
    expect(await deliverAlongChain(store, PLAIN, signal(runId, 's1'), 100)).toEqual({
      kind: 'handing-over',
      runId,
      successor: 'ghost-successor',
    });
    await store.runs.finish(runId, epoch, { status: 'completed', result: resultNaming('ghost-successor') });
    expect(await deliverAlongChain(store, PLAIN, signal(runId, 's1'), 100)).toEqual({
      kind: 'unknown',
      runId: 'ghost-successor',
      hops: 1,
    });
  });

  it('refuses a chain longer than the bound, and leaves Baton’s own signals with the run', async () => {
    const store = memoryStore();
    const ids = await chainOf(store, 4);
    expect(await deliverAlongChain(store, PLAIN, signal(ids[0]!, 's1'), 2)).toEqual({
      kind: 'too-long',
      runId: ids[0],
      hops: 3,
    });
    const childEnd = { runId: ids[0]!, signalId: 'child-end:c1', name: 'baton.child:c1', payload: {} };
    expect(await deliverAlongChain(store, PLAIN, childEnd, 100)).toEqual({ kind: 'dropped', runId: ids[0] });
    expect(await store.signals.read(ids[3]!)).toEqual([]);
  });

  it('drops a signal to a finished run that did not continue', async () => {
    const store = memoryStore();
    const { runId, epoch } = await newRun(store);
    await store.runs.finish(runId, epoch, { status: 'completed', result: 1 });
    expect(await deliverAlongChain(store, PLAIN, signal(runId, 's1'), 100)).toEqual({
      kind: 'dropped',
      runId,
    });
  });
});

describe('carryToSuccessor', () => {
  /** A live run with signals and update requests, some of them taken per `entries`. */
  async function loadedRun(store: Store, protection: PayloadProtection) {
    const { runId, epoch } = await newRun(store);
    const deliver = (signalId: string, name: string, payload: unknown) =>
      store.signals.deliver(runId, {
        signalId,
        name,
        payload: sealValue(payload, runId, 'signal payload', protection),
      });
    await deliver('taken', 'note', 'a');
    await deliver('left-1', 'note', 'b');
    await deliver('child-end:c1', 'baton.child:c1', { status: 'completed', result: 1 });
    await deliver('left-2', 'other', { n: 2.5 });
    const request = (updateId: string, args: unknown) =>
      store.updates.request(runId, {
        updateId,
        name: 'add',
        args: sealValue(args, runId, 'update args', protection),
      });
    await request('u-new', { qty: 1 });
    await request('u-accepted', { qty: 2 });
    const entries: JournalEntry[] = [
      { type: 'SignalReceived', seq: 1, name: 'note', signalId: 'taken', payload: 'a' },
      { type: 'UpdateAccepted', seq: 2, updateId: 'u-accepted', name: 'add', args: { qty: 2 } },
    ] as unknown as JournalEntry[];
    const successor = newId('successor');
    return { runId, epoch, entries, successor, result: resultNaming(successor) };
  }

  const optionsFor = (store: Store, protection: PayloadProtection) => ({
    store,
    transport: memoryTransport(),
    logger: silentLogger,
    payloadProtection: protection,
    faults: undefined,
  });

  it('carries the signals and requests the run never took, sealed for the successor, once', async () => {
    const store = memoryStore();
    const loaded = await loadedRun(store, SEALED);
    const options = optionsFor(store, SEALED);
    const run = (await store.runs.get(loaded.runId))!;
    await carryToSuccessor(options, run, loaded.epoch, loaded.entries, loaded.result);
    // Again, as after a crash: nothing is carried twice.
    await carryToSuccessor(options, run, loaded.epoch, loaded.entries, loaded.result);

    const successor = await store.runs.get(loaded.successor);
    expect(successor).toMatchObject({ status: 'pending', idempotencyKey: continuationKey(loaded.runId) });
    expect(openValue(successor?.input, loaded.successor, 'run input', SEALED)).toEqual({ round: 2 });
    const inbox = await store.signals.read(loaded.successor);
    expect(
      inbox.map((s) => [
        s.signalId,
        s.name,
        openValue(s.payload, loaded.successor, 'signal payload', SEALED),
      ]),
    ).toEqual([
      ['left-1', 'note', 'b'],
      ['left-2', 'other', { n: 2.5 }],
    ]);
    const pending = await store.updates.pending(loaded.successor);
    expect(
      pending.map((r) => [r.updateId, openValue(r.args, loaded.successor, 'update args', SEALED)]),
    ).toEqual([['u-new', { qty: 1 }]]);
    // The update the run accepted and never answered is answered, failed, naming the successor.
    const kept = await store.updates.outcome(loaded.runId, 'u-accepted');
    const outcome = openUpdateOutcome(kept!.outcome, loaded.runId, SEALED);
    expect(outcome).toMatchObject({ status: 'failed', error: { code: CONTINUED_AS_NEW_CODE } });
    expect(JSON.stringify(outcome)).toContain(loaded.successor);
    // The run keeps nothing new from now on.
    expect((await store.runs.get(loaded.runId))?.continuedAs).toBe(loaded.successor);
  });

  it('creates no successor record when there is nothing to carry', async () => {
    const store = memoryStore();
    const { runId, epoch } = await newRun(store);
    const successor = newId('successor');
    const run = (await store.runs.get(runId))!;
    await carryToSuccessor(optionsFor(store, PLAIN), run, epoch, [], resultNaming(successor));
    expect(await store.runs.get(successor)).toBeUndefined();
    expect((await store.runs.get(runId))?.continuedAs).toBe(successor);
  });

  it('stops at a successor that has continued already: it carried on what it did not take', async () => {
    const store = memoryStore();
    const loaded = await loadedRun(store, PLAIN);
    const options = optionsFor(store, PLAIN);
    const run = (await store.runs.get(loaded.runId))!;
    await carryToSuccessor(options, run, loaded.epoch, loaded.entries, loaded.result);
    // The successor ran, took 'left-1', and continued; the run's end is then replayed.
    const lease = await store.leases.acquire(loaded.successor, 'w2', 30_000);
    if (!lease.ok) throw new Error('successor not acquirable');
    const third = newId('third');
    await store.runs.continueAs(loaded.successor, lease.epoch, third);
    await carryToSuccessor(options, run, loaded.epoch, loaded.entries, loaded.result);
    expect(await store.runs.get(third)).toBeUndefined();
    expect((await store.signals.read(loaded.successor)).map((s) => s.signalId)).toEqual(['left-1', 'left-2']);
  });

  it('is fenced: a stale owner marks and carries nothing', async () => {
    const store = memoryStore();
    const loaded = await loadedRun(store, PLAIN);
    const run = (await store.runs.get(loaded.runId))!;
    await expect(
      carryToSuccessor(optionsFor(store, PLAIN), run, loaded.epoch + 1, loaded.entries, loaded.result),
    ).rejects.toMatchObject({ code: 'BATON_FENCED_WRITE' });
    expect(await store.runs.get(loaded.successor)).toBeUndefined();
    expect((await store.runs.get(loaded.runId))?.continuedAs).toBeUndefined();
  });
});
