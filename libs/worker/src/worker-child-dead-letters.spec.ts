/**
 * A child whose start is dead-lettered, on memory adapters (worker processes on the real buses and
 * stores: tests/system/src/child-dead-letters.int.spec.ts): the parent's wait throws
 * ChildWorkflowError naming the child, its workflow@version and the dead-letter code, for every
 * reason a start is dead-lettered; a redrive of the letter after the fix makes no second child; a
 * tombstone a crash left unfinished is finished by the start's next delivery. A child that ends
 * outside its session (its resume kept failing, its journal failed verification) tells its parent
 * too.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { CHILD_START_DEAD_LETTERED, ChildWorkflowError, defineActivity, defineWorkflow } from '@baton/core';
import type { EnqueueOptions, Store, Transport } from '@baton/core/adapter';
import { memoryStore } from '@baton/core/memory';
import {
  decodeEntries,
  decodeMessage,
  resolvePayloadProtection,
  type JournalEntry,
  childKeyPrefix,
} from '@baton/core/runtime';
import { withCapability } from './capabilities.spec-helper.js';
import { SETTLING_LEASE_MS, SETTLING_OWNER } from './run/child-dead-letters.js';
import { fleet, Ledger, until, type Fleet } from './fleet.spec-helper.js';
import type { WorkerOptions } from './index.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

function workflows(ledger: Ledger) {
  const work = defineActivity({
    name: 'dl_work',
    run: async (n: number, io) => (ledger.record(io.idempotencyKey), n * 10),
  });
  const child = defineWorkflow({
    name: 'dl_child',
    version: 2,
    run: async (ctx, n: number) => ctx.run(work, n),
  });
  /** Returns what the child's failure said, so the spec reads it from the parent's result. */
  const parent = defineWorkflow({
    name: 'dl_parent',
    version: 1,
    run: async (ctx, n: number) => {
      try {
        return { result: await ctx.executeChild(child, n) };
      } catch (err) {
        if (!(err instanceof ChildWorkflowError)) throw err;
        return { childRunId: err.childRunId, code: err.failure.code, message: err.message };
      }
    },
  });
  return { child, parent };
}

/** What dl_parent returns: the child's result, or what its failure said. */
interface Outcome {
  result?: number;
  childRunId?: string;
  code?: string;
  message?: string;
}

/** Rewrites the start messages of dl_child as they are enqueued, before any worker reads them. */
function spoilChildStarts(spoil: (message: Record<string, unknown>) => Uint8Array) {
  return (transport: Transport): Transport =>
    withCapability(transport, 'runQueue', {
      enqueue: (data: Uint8Array, options?: EnqueueOptions) => {
        const message = JSON.parse(new TextDecoder().decode(data)) as Record<string, unknown>;
        const spoilt = message.kind === 'start' && message.workflow === 'dl_child' ? spoil(message) : data;
        return transport.runQueue.enqueue(spoilt, options);
      },
    });
}

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

async function childrenOf(f: Fleet, parentRunId: string) {
  return (await f.store.runs.list({ idempotencyKeyPrefix: childKeyPrefix(parentRunId), limit: 100 })).runs;
}

async function entriesOf(f: Fleet, runId: string): Promise<JournalEntry[]> {
  return (await f.journal.journal.read(runId, 0)).flatMap((r) => decodeEntries(r.data, runId));
}

/** The child's ends the parent received: one, whatever was sent again. */
async function endsReceived(f: Fleet, parentRunId: string) {
  return (await entriesOf(f, parentRunId)).filter(
    (e) => e.type === 'SignalReceived' && e.name.startsWith('baton.child:'),
  );
}

describe('a child whose start is dead-lettered', () => {
  it('fails the parent’s wait with ChildWorkflowError within the grace when no worker registers the child, and a redrive after the fix makes no second child', async () => {
    const ledger = new Ledger();
    const { child, parent } = workflows(ledger);
    const f = (current = fleet({ workflows: [parent], missingVersionGraceMs: 300 }));
    await f.spawn();
    const run = await f.client.start(parent, 4);
    const out = (await run.result({ timeoutMs: 10_000 })) as Outcome;

    const [tombstone, ...others] = await childrenOf(f, run.runId);
    expect(others).toEqual([]);
    expect(out.childRunId).toBe(tombstone!.runId);
    expect(out.code).toBe(CHILD_START_DEAD_LETTERED);
    expect(out.message).toContain(
      `child run ${tombstone!.runId} (dl_child) failed: StartDeadLetteredError: the start of child run ` +
        `${tombstone!.runId} (dl_child@2) was dead-lettered 'unknown-workflow': workflow dl_child@2 is not registered`,
    );
    // The child is settled: a failed run that names the dead letter, and a letter for an operator.
    expect(tombstone).toMatchObject({ status: 'failed', workflow: 'dl_child', version: 2, input: 4 });
    expect(tombstone!.error).toMatchObject({
      name: 'StartDeadLetteredError',
      code: CHILD_START_DEAD_LETTERED,
    });
    const [letter] = await f.transport.deadLetters.list();
    expect(letter).toMatchObject({ code: 'unknown-workflow' });
    expect(decodeMessage(letter!.data).runId).toBe(tombstone!.runId);

    // A retry has nothing to run: the child has no history, and its parent took its failure.
    await expect(f.client.timeTravel.retry(tombstone!.runId)).rejects.toThrow(
      /this child never ran: the start of child run \S+ \(dl_child@2\) was dead-lettered/,
    );

    // The fix: a worker that registers dl_child@2 starts and redrives the letter by itself.
    const fixed = await f.spawn({ workflows: [parent, child] });
    await until(
      () => fixed.events.some((e) => e.type === 'dead-letters-redriven'),
      5_000,
      'the redrive of the letter',
    );
    await until(async () => (await f.transport.deadLetters.list()).length === 0, 5_000, 'the letter to go');
    // The redriven start was dropped: no second child, the tombstone unchanged, the child never ran.
    await new Promise((r) => setTimeout(r, 300));
    expect(await childrenOf(f, run.runId)).toEqual([tombstone]);
    expect(await f.store.leases.get(tombstone!.runId)).toMatchObject({ state: 'finished', epoch: 1 });
    expect(ledger.executions.size).toBe(0);
    expect(fixed.events.filter((e) => e.type === 'run-claimed' && e.runId === tombstone!.runId)).toEqual([]);
    expect(await endsReceived(f, run.runId)).toHaveLength(1);
  });

  const spoilers: Array<[string, (m: Record<string, unknown>) => Uint8Array, RegExp]> = [
    ['unparseable', (m) => encode({ ...m, v: 999 }), /codec version 999/],
    ['too-large', (m) => encode({ ...m, padding: 'x'.repeat(8_192) }), /exceeds maxMessageBytes \(4096\)/],
    [
      'unreadable-payload',
      (m) => {
        const { input: _input, ...rest } = m;
        return encode({ ...rest, inputRef: { sha256: '0'.repeat(64), size: 10, run: m.runId } });
      },
      /start message input.*is missing/,
    ],
  ];
  it.each(spoilers)(
    'fails the parent’s wait for a child whose start is dead-lettered %s, and the letter redriven makes no second child',
    async (code, spoil, reason) => {
      const ledger = new Ledger();
      const f = (current = fleet(
        { workflows: Object.values(workflows(ledger)), maxMessageBytes: 4_096 },
        spoilChildStarts(spoil),
      ));
      await f.spawn();
      const run = await f.client.start(workflows(ledger).parent, 5);
      const out = (await run.result({ timeoutMs: 10_000 })) as Outcome;

      const [tombstone, ...others] = await childrenOf(f, run.runId);
      expect(others).toEqual([]);
      expect(out.childRunId).toBe(tombstone!.runId);
      expect(out.message).toContain(
        `the start of child run ${tombstone!.runId} (dl_child@2) was dead-lettered '${code}': `,
      );
      expect(out.message).toMatch(reason);
      // The input of a message that could not be read is kept nowhere but in the letter.
      expect(tombstone).toMatchObject({ status: 'failed', input: null });
      const [letter, ...more] = (await f.transport.deadLetters.page()).letters;
      expect(more).toEqual([]);
      expect(letter).toMatchObject({ code });

      // Redriven without a fix it is poison again, and dead-lettered again: still one child, never
      // run, and the parent told once (the end sent again is ignored by its inbox).
      const worker = f.workers[0]!;
      await f.transport.deadLetters.redrive(letter!.id);
      await until(
        () => worker.events.filter((e) => e.type === 'dead-lettered').length === 2,
        5_000,
        'the redriven start to be dead-lettered again',
      );
      expect(await childrenOf(f, run.runId)).toEqual([tombstone]);
      expect(ledger.executions.size).toBe(0);
      expect(await endsReceived(f, run.runId)).toHaveLength(1);
    },
  );

  /**
   * What a worker killed between the tombstone's two store calls leaves: the child's run, its lease
   * held by the settling owner, and its start still on the queue. Made here as the child's start
   * is enqueued, before any worker reads it.
   */
  function unfinishedTombstoneOnStart(store: Store, finished = false) {
    return (transport: Transport): Transport =>
      withCapability(transport, 'runQueue', {
        enqueue: async (data: Uint8Array, options?: EnqueueOptions) => {
          const message = decodeMessage(data);
          if (message.kind === 'start' && message.workflow === 'dl_child') {
            const taken = await store.runs.createAndLease(
              {
                runId: message.runId,
                workflow: message.workflow,
                version: message.version,
                input: message.input,
                idempotencyKey: message.idempotencyKey ?? null,
              },
              SETTLING_OWNER,
              SETTLING_LEASE_MS,
            );
            // Killed after the tombstone was finished, before the parent was told.
            if (finished && taken.created && taken.lease.ok) {
              await store.runs.finish(message.runId, taken.lease.epoch, {
                status: 'failed',
                error: {
                  name: 'StartDeadLetteredError',
                  code: CHILD_START_DEAD_LETTERED,
                  message: 'earlier',
                },
              });
            }
          }
          return transport.runQueue.enqueue(data, options);
        },
      });
  }

  it('a tombstone a crash left unfinished is finished by the start’s next dead letter, and the parent told', async () => {
    const ledger = new Ledger();
    const { parent } = workflows(ledger);
    const store = memoryStore();
    const f = (current = fleet(
      { workflows: [parent], missingVersionGraceMs: 200 },
      unfinishedTombstoneOnStart(store),
      () => store,
    ));
    await f.spawn();
    const run = await f.client.start(parent, 6);
    const out = (await run.result({ timeoutMs: 10_000 })) as Outcome;
    expect(out.message).toMatch(/dead-lettered 'unknown-workflow'/);
    const [tombstone, ...others] = await childrenOf(f, run.runId);
    expect(others).toEqual([]);
    expect(tombstone).toMatchObject({ status: 'failed', attempts: 1 });
    expect(await f.store.leases.get(tombstone!.runId)).toMatchObject({ state: 'finished', epoch: 1 });
  });

  it('a settled child whose parent a crash left untold: the start’s next delivery tells it, and is dropped', async () => {
    const ledger = new Ledger();
    const { parent } = workflows(ledger);
    const store = memoryStore();
    const f = (current = fleet(
      { workflows: [parent], missingVersionGraceMs: 60_000 },
      unfinishedTombstoneOnStart(store, true),
      () => store,
    ));
    await f.spawn();
    const run = await f.client.start(parent, 8);
    // Told long before the grace could run out: from the tombstone, not from a new dead letter.
    const out = (await run.result({ timeoutMs: 10_000 })) as Outcome;
    expect(out).toMatchObject({ code: CHILD_START_DEAD_LETTERED });
    expect(out.message).toMatch(/StartDeadLetteredError: earlier$/);
    expect(await f.transport.deadLetters.list()).toEqual([]);
    expect(await childrenOf(f, run.runId)).toHaveLength(1);
  });

  it('a tombstone a crash left unfinished, met by a worker that can run the child, runs the child once with its input', async () => {
    const ledger = new Ledger();
    const { child, parent } = workflows(ledger);
    const store = memoryStore();
    const f = (current = fleet(
      { workflows: [parent, child] },
      unfinishedTombstoneOnStart(store),
      () => store,
    ));
    await f.spawn();
    const run = await f.client.start(parent, 7);
    expect(await run.result({ timeoutMs: 10_000 })).toEqual({ result: 70 });
    const [ran, ...others] = await childrenOf(f, run.runId);
    expect(others).toEqual([]);
    expect(ran).toMatchObject({ status: 'completed', result: 70 });
    expect(ledger.executions.size).toBe(1);
    expect(await f.transport.deadLetters.list()).toEqual([]);
  });
});

describe('a child that ends outside its session', () => {
  function waitingChild(ledger: Ledger) {
    const work = defineActivity({
      name: 'ws_work',
      run: async (n: number, io) => (ledger.record(io.idempotencyKey), n * 10),
    });
    const child = defineWorkflow({
      name: 'ws_child',
      version: 1,
      run: async (ctx, n: number) => {
        const value = await ctx.run(work, n);
        await ctx.waitForSignal('go');
        return value;
      },
    });
    const parent = defineWorkflow({
      name: 'ws_parent',
      version: 1,
      run: async (ctx, n: number) => {
        try {
          return { result: await ctx.executeChild(child, n) };
        } catch (err) {
          if (!(err instanceof ChildWorkflowError)) throw err;
          return { childRunId: err.childRunId, code: err.failure.code, message: err.message };
        }
      },
    });
    return { child, parent };
  }

  /**
   * A fleet whose first worker ran the parent to its wait and the child to its signal, then
   * stopped. Its store throws, as a bug in a codec or a driver might, on every load of the
   * checkpoint of the run `broken.runId` names, once set.
   */
  async function childWaiting(overrides: Partial<WorkerOptions> = {}) {
    const ledger = new Ledger();
    const { child, parent } = waitingChild(ledger);
    const store = memoryStore();
    const broken: { runId?: string } = {};
    const faulty = withCapability(store, 'checkpoints', {
      load: async (runId: string, seq?: number) => {
        if (runId === broken.runId) throw new TypeError('driver bug');
        return store.checkpoints.load(runId, seq);
      },
    });
    const f = (current = fleet({ workflows: [parent, child], ...overrides }, undefined, () => faulty));
    const first = await f.spawn();
    const run = await f.client.start(parent, 3);
    await until(async () => (await childrenOf(f, run.runId))[0]?.status === 'suspended', 5_000, 'the child');
    const childId = (await childrenOf(f, run.runId))[0]!.runId;
    await until(async () => (await f.store.runs.get(run.runId))?.status === 'suspended', 5_000, 'the parent');
    await first.worker.stop();
    return { f, run, childId, broken };
  }

  it('whose resume keeps failing: its parent gets ChildWorkflowError with ResumeFailedError', async () => {
    const { f, run, childId, broken } = await childWaiting({
      maxResumeFailures: 2,
      resumeBackoffMs: 20,
      resumeBackoffMaxMs: 40,
    });
    broken.runId = childId;
    await f.spawn();
    await f.client.signal(childId, 'go');
    const out = (await run.result({ timeoutMs: 10_000 })) as Outcome;
    expect(out).toMatchObject({ childRunId: childId, code: 'BATON_RESUME_FAILED' });
    expect(out.message).toContain(`child run ${childId} (ws_child) failed: ResumeFailedError`);
    expect(await f.store.runs.get(childId)).toMatchObject({ status: 'failed' });
  });

  it('whose journal fails verification: its parent gets ChildWorkflowError with the integrity error', async () => {
    const protection = resolvePayloadProtection({
      signingKeys: `s1:${randomBytes(32).toString('base64')}`,
    });
    const { f, run, childId } = await childWaiting({ payloadProtection: protection });
    // Replay the child's first record (its activity's result) at the end of its journal.
    const records = await f.journal.journal.read(childId, 0);
    await f.journal.journal.append({ runId: childId, data: records[0]!.data });
    await f.spawn({ payloadProtection: protection });
    await f.client.signal(childId, 'go');
    const out = (await run.result({ timeoutMs: 10_000 })) as Outcome;
    expect(out).toMatchObject({ childRunId: childId, code: 'BATON_INTEGRITY' });
    expect(out.message).toContain(`child run ${childId} (ws_child) failed: CheckpointIntegrityError`);
  });
});
