/**
 * Checkpoint history, forks and retries on the real adapters (NATS + Redis, NATS + Postgres,
 * Kafka + Redis), with real Worker instances in this process:
 * - every checkpoint of a run is listed, oldest first, with its summary fields;
 * - a fork from a checkpoint or a journal position replays the steps before that point (they are
 *   not executed again), executes the ones after it, returns the right result, and leaves the
 *   original untouched;
 * - a retry of a failed run completes it, running the failed step again and nothing before it;
 * - with payload protection on, a client holding the keys forks and retries a protected run, one without
 *   them gets an error naming what it lacks;
 * - bad input (an unknown run, checkpoint or position, a retry of a completed run) gets an error
 *   naming it and changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { Store, Transport } from '@baton/core/adapter';
import { resolvePayloadProtection, type PayloadProtection } from '@baton/core/runtime';
import { Worker } from '@baton/worker';
import { inProcessNamespace, IN_PROCESS_PAIRS } from './in-process.spec-helper.js';

/** Executions per activity name: the outside world's view of side effects. */
const executions = new Map<string, number>();
const executed = (name: string): number => executions.get(name) ?? 0;
const counted = (name: string) =>
  defineActivity({
    name,
    run: async (text: string) => (executions.set(name, executed(name) + 1), `${text}>${name}`),
  });
const STEPS = ['a', 'b', 'c', 'd'].map(counted);

/** Four steps, each appending its name: the result shows every step ran, in order. */
const pipeline = defineWorkflow({
  name: 'tt_pipeline',
  version: 1,
  run: async (ctx, input: string) => {
    let text = input;
    for (const step of STEPS) text = await ctx.run(step, text);
    return text;
  },
});

let flakyFails = true;
const flaky = defineActivity({
  name: 'flaky',
  retry: { maxAttempts: 1 },
  run: async (text: string) => {
    executions.set('flaky', executed('flaky') + 1);
    if (flakyFails) throw new Error('bureau down');
    return `${text}>flaky`;
  },
});
/** a, then a step that fails until the flag flips, then b. */
const flakyPipeline = defineWorkflow({
  name: 'tt_flaky',
  version: 1,
  run: async (ctx, input: string) => {
    const first = await ctx.run(STEPS[0]!, input);
    const second = await ctx.run(flaky, first);
    return ctx.run(STEPS[1]!, second);
  },
});

const key = (id: string): string => `${id}:${randomBytes(32).toString('base64')}`;
const PROTECTED = resolvePayloadProtection({ encryptionKeys: key('k1'), signingKeys: key('s1') }, {});

describe.each(IN_PROCESS_PAIRS)('time travel on $name', ({ factory }) => {
  const ns = inProcessNamespace(factory, 'tt');
  const workers = ns.workers;
  let transport: Transport;
  let store: Store;
  let client: Client;
  beforeAll(() => {
    ({ transport, store, client } = ns);
  });

  async function startWorker(payloadProtection?: PayloadProtection): Promise<Worker> {
    const worker = new Worker({
      transport,
      store,
      workflows: [pipeline, flakyPipeline],
      leaseMs: 3_000,
      reapIntervalMs: 100,
      fetchWaitMs: 200,
      inProcessWaitMs: 0,
      drainTimeoutMs: 2_000,
      checkpointEvery: 1,
      ...(payloadProtection ? { payloadProtection } : {}),
    });
    await worker.start();
    workers.push(worker);
    return worker;
  }

  /** A completed pipeline run and its checkpoints, with the counts reset after it. */
  async function completedRun(input: string, c = client): Promise<string> {
    const run = await c.start(pipeline, input);
    await expect(run.result({ timeoutMs: 20_000 })).resolves.toBe(`${input}>a>b>c>d`);
    executions.clear();
    return run.runId;
  }

  /** The seq of the checkpoint holding exactly `steps` completed activities. */
  async function checkpointAfter(runId: string, steps: number): Promise<number> {
    for (const summary of await client.timeTravel.checkpoints(runId)) {
      const checkpoint = await store.checkpoints.load(runId, summary.seq);
      const done = checkpoint?.entries.filter((e) => e.type === 'ActivityCompleted').length;
      if (done === steps && summary.status === 'running') return summary.seq;
    }
    throw new Error(`run ${runId} has no checkpoint after ${steps} steps`);
  }

  it('lists every checkpoint of a run, oldest first, with seq, time, position, size and schema', async () => {
    await startWorker();
    const runId = await completedRun('h');
    const summaries = await client.timeTravel.checkpoints(runId);
    expect(summaries.length).toBeGreaterThanOrEqual(4);
    const seqs = summaries.map((s) => s.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    for (const s of summaries) {
      expect(s).toMatchObject({ schemaVersion: 1, epoch: expect.any(Number) });
      expect(s.size).toBeGreaterThan(0);
      expect(s.createdAt).toBeGreaterThan(0);
    }
    const positions = summaries.map((s) => s.journalPosition);
    expect(positions).toEqual([...positions].sort((x, y) => x - y));
    expect(summaries.at(-1)?.status).toBe('completed');
  });

  it('forks from a checkpoint: the steps before it are replayed, not executed; the rest run; the original is untouched', async () => {
    await startWorker();
    const runId = await completedRun('f');
    const before = {
      checkpoints: await client.timeTravel.checkpoints(runId),
      history: await client.history(runId),
    };
    const seq = await checkpointAfter(runId, 2);
    const fork = await client.timeTravel.fork<string>(runId, { fromCheckpoint: seq });
    expect(fork.runId).not.toBe(runId);
    await expect(fork.result({ timeoutMs: 20_000 })).resolves.toBe('f>a>b>c>d');
    expect([executed('a'), executed('b'), executed('c'), executed('d')]).toEqual([0, 0, 1, 1]);
    const forked = await client.describe(fork.runId);
    expect(forked).toMatchObject({
      workflow: 'tt_pipeline',
      version: 1,
      input: 'f',
      status: 'completed',
      forkedFrom: { runId, checkpoint: seq },
    });
    expect((await client.describe(runId)).forkedFrom).toBeUndefined();
    expect((await client.timeTravel.checkpoints(fork.runId))[0]).toMatchObject({ seq: 1, epoch: 0 });
    expect(await client.timeTravel.checkpoints(runId)).toEqual(before.checkpoints);
    expect(await client.history(runId)).toEqual(before.history);
    expect((await client.describe(runId)).status).toBe('completed');
  });

  it('forks from a journal position, under a chosen run id', async () => {
    await startWorker();
    const runId = await completedRun('p');
    const history = await client.history(runId);
    const afterA = history.find(
      (p) => p.entry.type === 'ActivityCompleted' && p.entry.name === 'a',
    )!.position;
    const forkId = `fork-${randomBytes(4).toString('hex')}`;
    const fork = await client.timeTravel.fork<string>(runId, { fromJournalPosition: afterA, runId: forkId });
    expect(fork.runId).toBe(forkId);
    expect((await client.describe(forkId)).forkedFrom).toEqual({ runId, journalPosition: afterA });
    await expect(fork.result({ timeoutMs: 20_000 })).resolves.toBe('p>a>b>c>d');
    expect([executed('a'), executed('b'), executed('c'), executed('d')]).toEqual([0, 1, 1, 1]);
    // The fork's own history starts from its seed: step a is not in its journal, only in the seed.
    const forkHistory = await client.history(forkId);
    expect(forkHistory.some((p) => p.entry.type === 'ActivityCompleted' && p.entry.name === 'a')).toBe(false);
  });

  it('retries a failed run: the failed step runs again, the steps before it do not', async () => {
    await startWorker();
    flakyFails = true;
    executions.clear();
    const run = await client.start<string, string>(flakyPipeline, 'r');
    await expect(run.result({ timeoutMs: 20_000 })).rejects.toMatchObject({
      name: 'WorkflowFailedError',
    });
    expect([executed('a'), executed('flaky'), executed('b')]).toEqual([1, 1, 0]);
    const failedCheckpoints = await client.timeTravel.checkpoints(run.runId);
    flakyFails = false;
    await client.timeTravel.retry(run.runId);
    await expect(run.result({ timeoutMs: 20_000 })).resolves.toBe('r>a>flaky>b');
    expect([executed('a'), executed('flaky'), executed('b')]).toEqual([1, 2, 1]);
    const after = await client.timeTravel.checkpoints(run.runId);
    // The failed run's checkpoints stay in the history; the retry's start and the new ones follow.
    expect(after.slice(0, failedCheckpoints.length)).toEqual(failedCheckpoints);
    expect(after.at(-1)?.status).toBe('completed');
    const description = await client.describe(run.runId);
    expect(description.error).toBeUndefined();
  });

  it('gives one resume to two concurrent retries', async () => {
    await startWorker();
    flakyFails = true;
    const run = await client.start<string, string>(flakyPipeline, 'twice');
    await expect(run.result({ timeoutMs: 20_000 })).rejects.toMatchObject({ name: 'WorkflowFailedError' });
    flakyFails = false;
    executions.clear();
    const outcomes = await Promise.allSettled([
      client.timeTravel.retry(run.runId),
      client.timeTravel.retry(run.runId),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const rejected = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toMatchObject({ name: 'RunStateError', code: 'BATON_RUN_STATE' });
    await expect(run.result({ timeoutMs: 20_000 })).resolves.toBe('twice>a>flaky>b');
    expect([executed('a'), executed('flaky'), executed('b')]).toEqual([0, 1, 1]);
  });

  it('forks a protected run with the keys, and refuses without them, naming what is missing', async () => {
    await startWorker(PROTECTED);
    const keyed = new Client({ transport, store, payloadProtection: PROTECTED });
    const runId = await completedRun('s', keyed);
    // Sealed entries cannot be counted from outside: fork from the newest checkpoint still running.
    const fromCheckpoint = (await keyed.timeTravel.checkpoints(runId))
      .filter((c) => c.status === 'running')
      .at(-1)!.seq;
    await expect(client.timeTravel.fork(runId, { fromCheckpoint })).rejects.toThrow(/signed|key/);
    const fork = await keyed.timeTravel.fork<string>(runId, { fromCheckpoint });
    await expect(fork.result({ timeoutMs: 20_000 })).resolves.toBe('s>a>b>c>d');
    expect(executed('a') + executed('b') + executed('c') + executed('d')).toBeLessThan(4);
  });

  it('retries a protected failed run with the keys; without them it refuses and the run stays failed', async () => {
    await startWorker(PROTECTED);
    const keyed = new Client({ transport, store, payloadProtection: PROTECTED });
    flakyFails = true;
    const run = await keyed.start<string, string>(flakyPipeline, 'sr');
    await expect(run.result({ timeoutMs: 20_000 })).rejects.toMatchObject({ name: 'WorkflowFailedError' });
    flakyFails = false;
    executions.clear();
    await expect(client.timeTravel.retry(run.runId)).rejects.toThrow(/signed|key/);
    expect((await client.describe(run.runId)).status).toBe('failed');
    await keyed.timeTravel.retry(run.runId);
    await expect(run.result({ timeoutMs: 20_000 })).resolves.toBe('sr>a>flaky>b');
    expect([executed('a'), executed('flaky'), executed('b')]).toEqual([0, 1, 1]);
  });

  it('names the unknown run, checkpoint or position, and a retry of a completed run, changing nothing', async () => {
    await startWorker();
    const runId = await completedRun('bad');
    const before = await client.timeTravel.checkpoints(runId);
    const unknown = `missing-${randomBytes(4).toString('hex')}`;
    await expect(client.timeTravel.checkpoints(unknown)).rejects.toMatchObject({
      name: 'NotFoundError',
      message: expect.stringContaining(unknown),
    });
    await expect(client.timeTravel.fork(unknown, { fromCheckpoint: 1 })).rejects.toMatchObject({
      name: 'NotFoundError',
      message: expect.stringContaining(unknown),
    });
    await expect(client.timeTravel.retry(unknown)).rejects.toMatchObject({ name: 'NotFoundError' });
    await expect(client.timeTravel.fork(runId, { fromCheckpoint: 999 })).rejects.toMatchObject({
      name: 'NotFoundError',
      message: expect.stringMatching(/no checkpoint 999 \(it has 1, /),
    });
    await expect(client.timeTravel.fork(runId, { fromJournalPosition: 99_999_999 })).rejects.toMatchObject({
      name: 'NotFoundError',
      message: expect.stringContaining('position 99999999'),
    });
    await expect(client.timeTravel.fork(runId, {})).rejects.toMatchObject({ name: 'ConfigError' });
    await expect(
      client.timeTravel.fork(runId, { fromCheckpoint: 1, fromJournalPosition: 1 }),
    ).rejects.toMatchObject({
      name: 'ConfigError',
    });
    await expect(client.timeTravel.retry(runId)).rejects.toMatchObject({
      name: 'RunStateError',
      message: expect.stringContaining('is completed'),
    });
    expect(await client.timeTravel.checkpoints(runId)).toEqual(before);
    expect(await client.describe(runId)).toMatchObject({ status: 'completed', result: 'bad>a>b>c>d' });
  });
});
