/**
 * A checkpoint the store cannot read, and a resume that keeps failing, on the real adapters (NATS +
 * Redis, NATS + Postgres, Kafka + Redis) with real Worker instances in this process. Checkpoints
 * are damaged by hand in the store (a Redis record that is no longer JSON, a Postgres row whose
 * entries is not a list):
 * - the newest damaged: the run resumes from the one before and completes;
 * - every one damaged, the journal still whole (NATS): it resumes from the journal's start;
 * - every one damaged and the journal unavailable (purged on NATS; on Kafka's shared log a read
 *   from the start is never trusted): it fails once with CheckpointUnreadableError;
 * - a resume that throws on every claim: failed after `maxResumeFailures` claims, with the last
 *   error in describe() and `baton.resume.failures` counted.
 * Completed activities never run again (counted per idempotency key).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import type { Store, Transport } from '@baton/core/adapter';
import { supportsGroupJournal, withGroupJournal } from '@baton/core/runtime';
import { METRIC } from '@baton/telemetry';
import { Worker, type WorkerEvent } from '@baton/worker';
import type { CrashEnvironment } from '@baton/testing/crash';
import { IN_PROCESS_PAIRS, until } from './in-process.spec-helper.js';
import { damageCheckpoint } from './damage.spec-helper.js';

const reader = new PeriodicExportingMetricReader({
  exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
  exportIntervalMillis: 3_600_000,
});
beforeAll(() => {
  // Before any Worker exists: its instruments come from the global provider at construction.
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});
afterAll(async () => {
  await reader.shutdown();
  metrics.disable();
});

/** The summed value of counter `name` whose attributes include `attributes`. */
async function counter(name: string, attributes: Record<string, string>): Promise<number> {
  const { resourceMetrics } = await reader.collect();
  let total = 0;
  for (const scope of resourceMetrics.scopeMetrics)
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== name) continue;
      for (const point of metric.dataPoints)
        if (Object.entries(attributes).every(([k, v]) => point.attributes[k] === v))
          total += point.value as number;
    }
  return total;
}

/** Executions per idempotency key: the outside world's view of side effects. */
const executions = new Map<string, number>();
const executedFor = (runId: string): number[] =>
  [...executions.entries()].filter(([k]) => k.startsWith(`${runId}:`)).map(([, n]) => n);

const step = defineActivity({
  name: 'step',
  run: async (n: number, io) => {
    executions.set(io.idempotencyKey, (executions.get(io.idempotencyKey) ?? 0) + 1);
    return n * 10;
  },
});
/** Three activities with a signal wait after each of the first two: two suspended checkpoints. */
const staged = defineWorkflow({
  name: 'staged_unreadable',
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

describe.each(IN_PROCESS_PAIRS)('unreadable checkpoints on $name', ({ name, factory }) => {
  const kafka = name.startsWith('kafka');
  let env: CrashEnvironment;
  let transport: Transport;
  let store: Store;
  let client: Client;
  const workers: Worker[] = [];
  let events: WorkerEvent[] = [];

  beforeAll(async () => {
    env = await factory(`u${randomBytes(5).toString('hex')}`, {});
    ({ transport, store } = env);
    client = new Client({ transport, store });
    await client.connect();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    events = [];
  }, 30_000);
  afterAll(async () => {
    await Promise.allSettled([transport?.close(), store?.close()]);
    await env?.dispose();
  }, 60_000);

  async function startWorker(withStore: Store = store): Promise<Worker> {
    const worker = new Worker({
      transport,
      store: withStore,
      workflows: [staged],
      leaseMs: 3_000,
      reapIntervalMs: 100,
      fetchWaitMs: 200,
      inProcessWaitMs: 0,
      drainTimeoutMs: 2_000,
      maxResumeFailures: 3,
      resumeBackoffMs: 50,
      resumeBackoffMaxMs: 100,
      onEvent: (event) => events.push(event),
    });
    await worker.start();
    workers.push(worker);
    return worker;
  }

  const suspendedWith = async (runId: string, done: number): Promise<boolean> =>
    (await store.runs.get(runId))?.status === 'suspended' && executedFor(runId).length === done;

  /** A run suspended at its second signal wait, its worker stopped; returns its checkpoint seqs. */
  async function runAtSecondWait(): Promise<{ runId: string; seqs: number[] }> {
    await startWorker();
    const { runId } = await client.start(staged, null);
    await until(() => suspendedWith(runId, 1), `${runId} to suspend`);
    await client.signal(runId, 'one');
    await until(() => suspendedWith(runId, 2), `${runId} to suspend again`);
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    return { runId, seqs: (await store.checkpoints.list(runId)).map((s) => s.seq) };
  }

  it('resumes from the previous checkpoint when the newest cannot be read, and runs no completed activity again', async () => {
    const { runId, seqs } = await runAtSecondWait();
    expect(seqs.length).toBeGreaterThanOrEqual(2);
    await damageCheckpoint(env.workerEnv, runId, seqs.at(-1)!);
    await expect(store.checkpoints.load(runId)).rejects.toMatchObject({
      name: 'CheckpointUnreadableError',
      seq: seqs.at(-1),
    });
    await startWorker();
    await client.signal(runId, 'two');
    expect(await client.result(runId, { timeoutMs: 20_000 })).toBe(60);
    expect(executedFor(runId)).toEqual([1, 1, 1]);
    expect(events.filter((e) => e.type === 'run-failed')).toEqual([]);
  });

  // On every pair here: kafka+redis journals through group records by default, so a run's whole
  // journal is read from its first pointer, as a NATS subject is read from its first record. (A run
  // journaled on Kafka's own topic is never read from the shared log's start.)
  it('resumes from the journal when every checkpoint is damaged and the journal holds the whole history', async () => {
    const { runId, seqs } = await runAtSecondWait();
    for (const seq of seqs) await damageCheckpoint(env.workerEnv, runId, seq);
    await startWorker();
    await client.signal(runId, 'two');
    expect(await client.result(runId, { timeoutMs: 20_000 })).toBe(60);
    expect(executedFor(runId)).toEqual([1, 1, 1]);
  });

  it('fails the run once with CheckpointUnreadableError when every checkpoint is damaged and the journal cannot stand in', async () => {
    const { runId, seqs } = await runAtSecondWait();
    for (const seq of seqs) await damageCheckpoint(env.workerEnv, runId, seq);
    // The journal is gone (an operator's purge): a grouped run's pointers (group commit, the default
    // where bus and store support it), or a run's own subject on NATS. Kafka's own journal: a read
    // from the shared log's start is never trusted to hold the whole history, so it cannot stand in.
    if (supportsGroupJournal(transport, store)) {
      await withGroupJournal(transport, store, { mode: 'per-run', log: 'test-journal' }).journal.purge(runId);
    } else if (!kafka) await transport.journal.purge(runId);
    events = [];
    await startWorker();
    await client.signal(runId, 'two');
    await until(async () => (await store.runs.get(runId))?.status === 'failed', `${runId} to fail`);
    const record = await client.describe(runId);
    expect(record.error).toMatchObject({
      name: 'CheckpointUnreadableError',
      code: 'BATON_CHECKPOINT_UNREADABLE',
    });
    expect(record.error?.message).toContain(`run ${runId}: checkpoint ${seqs.at(-1)} failed verification`);
    expect(events.filter((e) => e.type === 'run-failed' && e.runId === runId)).toHaveLength(1);
    expect(events.filter((e) => e.type === 'run-claimed' && e.runId === runId)).toHaveLength(1);
    expect(executedFor(runId)).toEqual([1, 1]);
  });

  it('fails a run whose resume throws on every claim after maxResumeFailures claims, with the last error, and counts it', async () => {
    await startWorker();
    const { runId } = await client.start(staged, null);
    await until(() => suspendedWith(runId, 1), `${runId} to suspend`);
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    const before = await counter(METRIC.resumeFailures, { 'baton.outcome': 'failed' });
    let loads = 0;
    // A store fault: every checkpoint load of this run throws, as a driver bug might.
    const faulty = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'checkpoints')
          return {
            ...target.checkpoints,
            load: async (id: string, seq?: number) => {
              if (id !== runId) return target.checkpoints.load(id, seq);
              loads += 1;
              throw new TypeError(`driver bug #${loads}`);
            },
          };
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await startWorker(faulty);
    await client.signal(runId, 'one');
    await until(async () => (await store.runs.get(runId))?.status === 'failed', `${runId} to fail`);
    expect(loads).toBe(3);
    const record = await client.describe(runId);
    expect(record.error).toMatchObject({ name: 'ResumeFailedError', code: 'BATON_RESUME_FAILED' });
    expect(record.error?.message).toContain('failed on 3 claims in a row');
    expect(record.error?.cause).toMatchObject({ name: 'TypeError', message: 'driver bug #3' });
    expect(
      events
        .filter((e) => e.type === 'resume-failed' && e.runId === runId)
        .map((e) => e.type === 'resume-failed' && e.final),
    ).toEqual([false, false, true]);
    expect(await counter(METRIC.resumeFailures, { 'baton.outcome': 'failed' })).toBe(before + 1);
    expect(executedFor(runId)).toEqual([1]);
  });
});
