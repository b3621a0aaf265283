/**
 * A checkpoint the store cannot read, and a resume that keeps failing, on the memory adapters (the
 * logic; real Redis, Postgres, NATS and Kafka are in tests/system/src/unreadable-checkpoint.int.spec.ts):
 * - the newest checkpoint damaged: the run resumes from the one before and completes;
 * - every checkpoint damaged, journal intact: it resumes from the journal's start;
 * - every checkpoint damaged, journal gone: it fails once with CheckpointUnreadableError;
 * - a resume that throws on every claim: failed after `maxResumeFailures` claims with
 *   ResumeFailedError carrying the last error.
 * Completed activities never run again (counted per idempotency key).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { GroupLog, JournalAppend, Store } from '@baton/core/adapter';
import { damageMemoryCheckpoint, memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from '@baton/client';
import { withCapability } from './capabilities.spec-helper.js';
import { FAST, fleet, Ledger, until, type Fleet } from './fleet.spec-helper.js';
import { Worker, type WorkerEvent } from './index.js';
import { silentLogger } from './logger.js';

let current: Fleet | undefined;
const extraWorkers: Worker[] = [];
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
  await Promise.all(extraWorkers.splice(0).map((w) => w.stop()));
});

/** Three activities with a signal wait after each of the first two: two suspended checkpoints. */
function stagedWorkflow(ledger: Ledger) {
  const step = defineActivity({
    name: 'step',
    run: async (n: number, io) => (ledger.record(io.idempotencyKey), n * 10),
  });
  return defineWorkflow({
    name: 'staged',
    version: 1,
    run: async (ctx) => {
      const a = await ctx.run(step, 1);
      await ctx.waitForSignal('one');
      const b = await ctx.run(step, 2);
      await ctx.waitForSignal('two');
      const c = await ctx.run(step, 3);
      return a + b + c;
    },
  });
}

const isSuspended = async (store: Store, runId: string, checkpoints: number): Promise<boolean> =>
  (await store.runs.get(runId))?.status === 'suspended' &&
  (await store.checkpoints.list(runId)).length >= checkpoints;

/** A run suspended at its second signal wait (two checkpoints at least), its first worker stopped. */
async function runAtSecondWait() {
  const ledger = new Ledger();
  const workflow = stagedWorkflow(ledger);
  current = fleet({ workflows: [workflow] });
  const f = current;
  const first = await f.spawn();
  const run = await f.client.start(workflow, null);
  await until(() => isSuspended(f.store, run.runId, 1), 5_000, 'the first suspension');
  await f.client.signal(run.runId, 'one');
  await until(
    async () => (await isSuspended(f.store, run.runId, 2)) && ledger.executions.size === 2,
    5_000,
    'the second suspension',
  );
  await first.worker.stop();
  const seqs = (await f.store.checkpoints.list(run.runId)).map((s) => s.seq);
  return { ledger, run, f, seqs };
}

const stepsRun = (ledger: Ledger): number[] => [...ledger.executions.values()];

describe('a checkpoint the store cannot read (memory adapters)', () => {
  it('resumes from the previous checkpoint when the newest is damaged, and runs no completed activity again', async () => {
    const { ledger, run, f, seqs } = await runAtSecondWait();
    expect(damageMemoryCheckpoint(f.store, run.runId, seqs.at(-1)!, 'not a checkpoint')).toBe(true);
    const warnings: [object, string | undefined][] = [];
    const logger = { ...silentLogger, warn: (obj: object, msg?: string) => void warnings.push([obj, msg]) };
    const worker = await f.spawn({ logger });
    await f.client.signal(run.runId, 'two');
    expect(await run.result({ timeoutMs: 5_000 })).toBe(60);
    expect(stepsRun(ledger)).toEqual([1, 1, 1]);
    expect(worker.events.filter((e) => e.type === 'run-failed')).toEqual([]);
    expect(warnings).toContainEqual([
      expect.objectContaining({
        runId: run.runId,
        unreadableCheckpoint: seqs.at(-1),
        resumedFromCheckpoint: seqs.at(-2),
      }),
      expect.stringContaining(
        `checkpoint ${seqs.at(-1)} cannot be read; resuming from checkpoint ${seqs.at(-2)}`,
      ),
    ]);
    // The checkpoints written after the fallback are numbered above the damaged one.
    const after = (await f.store.checkpoints.list(run.runId)).map((s) => s.seq);
    expect(Math.max(...after)).toBeGreaterThan(seqs.at(-1)!);
    // The client lists the damaged checkpoint, and refuses to fork from it, naming it.
    expect((await f.client.timeTravel.checkpoints(run.runId)).map((c) => c.seq)).toContain(seqs.at(-1));
    await expect(f.client.timeTravel.fork(run.runId, { fromCheckpoint: seqs.at(-1)! })).rejects.toMatchObject(
      {
        name: 'CheckpointUnreadableError',
        seq: seqs.at(-1),
      },
    );
  });

  it('resumes from the journal when every checkpoint is damaged and the journal holds the whole history', async () => {
    const { ledger, run, f, seqs } = await runAtSecondWait();
    for (const seq of seqs) damageMemoryCheckpoint(f.store, run.runId, seq, { entries: 'not a list' });
    await f.spawn();
    await f.client.signal(run.runId, 'two');
    expect(await run.result({ timeoutMs: 5_000 })).toBe(60);
    expect(stepsRun(ledger)).toEqual([1, 1, 1]);
  });

  it('fails the run once, naming the run and the checkpoint, when every checkpoint is damaged and the journal is gone', async () => {
    const { ledger, run, f, seqs } = await runAtSecondWait();
    for (const seq of seqs) damageMemoryCheckpoint(f.store, run.runId, seq, 'garbage');
    await f.journal.journal.purge(run.runId);
    const worker = await f.spawn();
    await f.client.signal(run.runId, 'two');
    await until(async () => (await f.store.runs.get(run.runId))?.status === 'failed', 5_000, 'the failure');
    const record = await f.client.describe(run.runId);
    expect(record.error).toMatchObject({
      name: 'CheckpointUnreadableError',
      code: 'BATON_CHECKPOINT_UNREADABLE',
    });
    expect(record.error?.message).toContain(
      `run ${run.runId}: checkpoint ${seqs.at(-1)} failed verification`,
    );
    expect(record.attempts).toBe(3);
    const letters = await f.transport.deadLetters.list();
    expect(letters.filter((l) => l.code === 'unreadable-checkpoint')).toHaveLength(1);
    expect(worker.events.filter((e) => e.type === 'run-failed')).toHaveLength(1);
    expect(stepsRun(ledger)).toEqual([1, 1]);
  });
});

describe('a resume that fails on every claim (memory adapters)', () => {
  it('is failed after maxResumeFailures claims in a row with the last error, suspended with a timer in between', async () => {
    const ledger = new Ledger();
    const workflow = stagedWorkflow(ledger);
    const transport = memoryTransport({ ackWaitMs: 1_000 });
    const store = memoryStore();
    const client = new Client({ transport, store });
    const start = async (faultyStore: Store, events: WorkerEvent[]) => {
      const worker = new Worker({
        ...FAST,
        transport,
        store: faultyStore,
        workflows: [workflow],
        maxResumeFailures: 3,
        resumeBackoffMs: 20,
        resumeBackoffMaxMs: 40,
        onEvent: (e) => events.push(e),
      });
      extraWorkers.push(worker);
      await worker.start();
      return worker;
    };
    const first = await start(store, []);
    const run = await client.start(workflow, null);
    await until(() => isSuspended(store, run.runId, 1), 5_000, 'the first suspension');
    await first.stop();

    // Every load of this run's checkpoint throws, as a bug in a codec or a driver might.
    let loads = 0;
    const faulty = withCapability(store, 'checkpoints', {
      load: async () => {
        loads += 1;
        throw new TypeError(`driver bug #${loads}`);
      },
    });
    const events: WorkerEvent[] = [];
    await start(faulty, events);
    await client.signal(run.runId, 'one');
    await until(async () => (await store.runs.get(run.runId))?.status === 'failed', 10_000, 'the failure');

    const failures = events.filter((e) => e.type === 'resume-failed');
    expect(failures.map((e) => [e.failures, e.final])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    expect(loads).toBe(3);
    const record = await client.describe(run.runId);
    expect(record.error).toMatchObject({ name: 'ResumeFailedError', code: 'BATON_RESUME_FAILED' });
    expect(record.error?.message).toContain('failed on 3 claims in a row');
    expect(record.error?.message).toContain('driver bug #3');
    expect(record.error?.cause).toMatchObject({ name: 'TypeError', message: 'driver bug #3' });
    expect(record.lease?.state).toBe('finished');
    expect(stepsRun(ledger)).toEqual([1]);

    // Once the cause is fixed, client.timeTravel.retry runs it again with a fresh count, to the end.
    await Promise.all(extraWorkers.splice(0).map((w) => w.stop()));
    await start(store, []);
    await client.timeTravel.retry(run.runId);
    await until(() => isSuspended(store, run.runId, 2), 5_000, 'the retried run to reach its second wait');
    await client.signal(run.runId, 'two');
    expect(await client.result(run.runId, { timeoutMs: 5_000 })).toBe(60);
    expect(stepsRun(ledger)).toEqual([1, 1, 1]);
  });

  it('is failed after maxResumeFailures when an append the bus refuses for good stops the run each time, instead of handing it off for ever', async () => {
    const ledger = new Ledger();
    const workflow = stagedWorkflow(ledger);
    const transport = memoryTransport({ ackWaitMs: 1_000 });
    const store = memoryStore();
    const client = new Client({ transport, store });
    const first = new Worker({ ...FAST, transport, store, workflows: [workflow] });
    extraWorkers.push(first);
    await first.start();
    const run = await client.start(workflow, null);
    await until(() => isSuspended(store, run.runId, 1), 5_000, 'the first suspension');
    await first.stop();

    // Every record holding a step's result is refused with an error that is not an outage: the
    // session stops mid-run (the executor's abort path, not the read path).
    let refused = 0;
    const refuses = (data: Uint8Array): boolean => {
      if (!new TextDecoder().decode(data).includes('ActivityCompleted')) return false;
      refused += 1;
      return true;
    };
    const groupLog = transport.groupLog!;
    const refusingGroupLog: GroupLog = {
      appendGroupRecord: async (log, data) => {
        if (refuses(data)) throw new TypeError(`bus refused record #${refused}`);
        return groupLog.appendGroupRecord(log, data);
      },
      readGroupRecords: (log, positions) => groupLog.readGroupRecords(log, positions),
      trimGroupLog: (log, before) => groupLog.trimGroupLog(log, before),
    };
    const refusingJournal = withCapability(transport, 'journal', {
      append: async (record: JournalAppend) => {
        if (refuses(record.data)) throw new TypeError(`bus refused record #${refused}`);
        return transport.journal.append(record);
      },
    });
    const refusing = new Proxy(refusingJournal, {
      get: (target, prop, receiver) =>
        prop === 'groupLog' ? refusingGroupLog : Reflect.get(target, prop, receiver),
    });
    const events: WorkerEvent[] = [];
    const worker = new Worker({
      ...FAST,
      transport: refusing,
      store,
      workflows: [workflow],
      maxResumeFailures: 3,
      resumeBackoffMs: 20,
      resumeBackoffMaxMs: 40,
      onEvent: (e) => events.push(e),
    });
    extraWorkers.push(worker);
    await worker.start();
    await client.signal(run.runId, 'one');
    await until(async () => (await store.runs.get(run.runId))?.status === 'failed', 10_000, 'the failure');

    expect(events.filter((e) => e.type === 'resume-failed').map((e) => [e.failures, e.final])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    expect(refused).toBe(3);
    // The second step ran once per claim (its result never became durable), three claims in all.
    expect(stepsRun(ledger)).toEqual([1, 3]);
    const record = await client.describe(run.runId);
    expect(record.error).toMatchObject({ name: 'ResumeFailedError', code: 'BATON_RESUME_FAILED' });
    expect(record.error?.message).toContain('bus refused record #3');
  });
});
