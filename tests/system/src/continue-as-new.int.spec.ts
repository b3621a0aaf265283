/**
 * Continue-as-new on the real adapters (NATS + Redis, Kafka + Postgres), with two real Workers in
 * this process: a chain of runs each continuing as the next completes with the last run's result
 * through the first run's handle; each run has a fresh journal on the bus (one step each); the
 * store links the chain both ways (the parent's result names the successor, the successor's
 * idempotency key its parent); every step ran once. What a run hands on: signals sent before the
 * continuation that it never took and signals sent to it afterwards are each taken once, in order,
 * by its successors (their journals say which took which); an update it never accepted is answered
 * by its successor to the caller that asked it. The crashes between the steps of a continuation are
 * driven on memory adapters (libs/worker/src/worker-continue-as-new.spec.ts and
 * worker-continue-as-new-carry.spec.ts).
 */
import { describe, expect, it } from 'vitest';
import { defineActivity, defineSignal, defineUpdate, defineWorkflow } from '@baton/core';
import {
  CONTINUED_AS,
  continuationKey,
  decodeJournalRecord,
  IDENTITY_PAYLOAD_CODEC,
  isContinuedAsNew,
} from '@baton/core/runtime';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import {
  inProcessNamespace,
  startInProcessWorkers,
  until,
  type InProcessNamespace,
} from './in-process.spec-helper.js';

const PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats') },
  { name: 'kafka+postgres', factory: crashEnvironment('postgres', 'kafka') },
];

const executions = new Map<string, number>();
const step = defineActivity({
  name: 'can_int_step',
  run: async (n: number, io) => (
    executions.set(io.idempotencyKey, (executions.get(io.idempotencyKey) ?? 0) + 1),
    n + 1
  ),
});
const loop = defineWorkflow({
  name: 'can_int_loop',
  version: 1,
  run: async (ctx, input: { n: number; until: number }) => {
    const next = await ctx.run(step, input.n);
    return next < input.until ? ctx.continueAsNew({ n: next, until: input.until }) : { final: next };
  },
});

const note = defineSignal<string>('note');
const addItem = defineUpdate<string, string[]>('add_item');

/** Released by a test: the first run of a chain waits for it, so signals pile up in its inbox. */
let release: () => void = () => undefined;
let released = Promise.resolve();
function closeGate(): void {
  released = new Promise<void>((resolve) => (release = resolve));
}
const hold = defineActivity({ name: 'can_int_hold', run: async () => void (await released) });

/**
 * Takes one note per run and continues until it has `rounds`; the first run waits at the gate
 * first and has no update handler (a request to it waits, never accepted); the others answer
 * `add_item` with the notes so far and the item.
 */
const notes = defineWorkflow({
  name: 'can_int_notes',
  version: 1,
  run: async (ctx, input: { seen: string[]; rounds: number }) => {
    if (input.seen.length > 0) ctx.onUpdate(addItem, (item) => [...input.seen, item]);
    else await ctx.run(hold, null);
    const seen = [...input.seen, await ctx.waitForSignal(note)];
    return seen.length < input.rounds ? ctx.continueAsNew({ seen, rounds: input.rounds }) : seen;
  },
});

/** The chain from `runId` on, as the store links it. */
async function chainOf(ns: InProcessNamespace, runId: string): Promise<string[]> {
  const ids = [runId];
  for (;;) {
    const record = await ns.store.runs.get(ids.at(-1)!);
    if (record === undefined || !isContinuedAsNew(record.result)) return ids;
    ids.push(record.result[CONTINUED_AS].runId);
  }
}

/** The signal ids each run of `ids` took, from its journal on the bus. */
async function takenBy(ns: InProcessNamespace, ids: string[]): Promise<string[][]> {
  return Promise.all(
    ids.map(async (id) =>
      (await ns.journal.journal.read(id, 0))
        .flatMap((r) => decodeJournalRecord(r.data, id, IDENTITY_PAYLOAD_CODEC, r.position))
        .flatMap((e) => (e.type === 'SignalReceived' ? [e.signalId] : [])),
    ),
  );
}

describe.each(PAIRS)('continue-as-new on $name', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'can');

  it(
    'runs a chain of five runs to the last result, each with a fresh journal and each step once',
    { timeout: 60_000 },
    async () => {
      await startInProcessWorkers(ns, { workflows: [loop] });
      const run = await ns.client.start(loop, { n: 0, until: 5 });
      expect(await run.result({ timeoutMs: 30_000 })).toEqual({ final: 5 });

      const ids = [run.runId];
      for (;;) {
        const record = await ns.store.runs.get(ids.at(-1)!);
        expect(record?.status).toBe('completed');
        if (!isContinuedAsNew(record!.result)) break;
        ids.push(record!.result[CONTINUED_AS].runId);
      }
      expect(ids).toHaveLength(5);
      for (const [i, id] of ids.entries()) {
        if (i > 0) expect((await ns.store.runs.get(id))?.idempotencyKey).toBe(continuationKey(ids[i - 1]!));
        const entries = (await ns.journal.journal.read(id, 0)).flatMap((r) =>
          decodeJournalRecord(r.data, id, IDENTITY_PAYLOAD_CODEC, r.position),
        );
        expect(entries.filter((e) => e.type === 'ActivityCompleted')).toHaveLength(1);
        expect(executions.get(`${id}:0`)).toBe(1);
      }
      // The operator's view: the successors, found by their idempotency keys.
      const page = await ns.store.runs.list({ idempotencyKeyPrefix: 'continue-as-new:', limit: 100 });
      expect(page.runs.map((r) => r.runId).sort()).toEqual(ids.slice(1).sort());
    },
  );

  it(
    'hands signals sent before and after the continuation to the successors, each taken once, in order',
    { timeout: 60_000 },
    async () => {
      closeGate();
      await startInProcessWorkers(ns, { workflows: [notes] });
      const run = await ns.client.start(notes, { seen: [], rounds: 4 });
      // Before: both wait in the first run's inbox while it is held; it takes 'a' and continues. Two
      // messages sent at once may be handled in either order (competing consumers), so 'b' is sent
      // once 'a' is in.
      await ns.client.signal(run.runId, note, 'a', { signalId: 'sig-a' });
      await until(async () => (await ns.store.signals.read(run.runId)).length === 1, "'a' in the inbox");
      await ns.client.signal(run.runId, note, 'b', { signalId: 'sig-b' });
      await until(async () => (await ns.store.signals.read(run.runId)).length === 2, "'b' in the inbox");
      release();
      await until(
        async () => (await ns.store.runs.get(run.runId))?.status === 'completed',
        'the first run to end',
      );
      // After: to the first run's id, twice with one id (a producer's retry): taken once.
      await ns.client.signal(run.runId, note, 'c', { signalId: 'sig-c' });
      await ns.client.signal(run.runId, note, 'c', { signalId: 'sig-c' });
      await until(
        async () => (await takenBy(ns, await chainOf(ns, run.runId))).flat().includes('sig-c'),
        "'c' to be taken",
      );
      // And to the second run's id, which has continued by now.
      const second = (await chainOf(ns, run.runId))[1]!;
      await ns.client.signal(second, note, 'd', { signalId: 'sig-d' });
      expect(await run.result({ timeoutMs: 30_000 })).toEqual(['a', 'b', 'c', 'd']);

      const ids = await chainOf(ns, run.runId);
      expect(ids).toHaveLength(4);
      expect(await takenBy(ns, ids)).toEqual([['sig-a'], ['sig-b'], ['sig-c'], ['sig-d']]);
      // The first run kept what came before its continuation, and names its successor.
      expect((await ns.store.signals.read(run.runId)).map((s) => s.signalId)).toEqual(['sig-a', 'sig-b']);
      expect((await ns.store.runs.get(run.runId))?.continuedAs).toBe(ids[1]);
    },
  );

  it(
    'answers an update the first run never accepted from its successor, to the caller that asked the first run',
    { timeout: 60_000 },
    async () => {
      closeGate();
      await startInProcessWorkers(ns, { workflows: [notes] });
      const run = await ns.client.start(notes, { seen: [], rounds: 2 });
      await until(
        async () => (await ns.store.runs.get(run.runId))?.status === 'running',
        'the first run held',
      );
      const asked = run.update(addItem, 'early', { updateId: 'up-early', timeoutMs: 30_000 });
      await until(async () => (await ns.store.updates.pending(run.runId)).length === 1, 'the request kept');
      await ns.client.signal(run.runId, note, 'a', { signalId: 'sig-a' });
      release();
      expect(await asked).toEqual(['a', 'early']);
      const [, successor] = await chainOf(ns, run.runId);
      expect((await ns.store.updates.outcome(successor!, 'up-early'))?.outcome).toEqual({
        status: 'completed',
        result: ['a', 'early'],
      });
      await ns.client.signal(run.runId, note, 'b', { signalId: 'sig-b' });
      expect(await run.result({ timeoutMs: 30_000 })).toEqual(['a', 'b']);
    },
  );
});
