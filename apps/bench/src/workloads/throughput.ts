/**
 * Throughput workloads (chain10, fanout, payload) on real worker processes: a warm-up, runs
 * executed one at a time (latency of one run, per-step overhead), then `runs` runs enqueued at
 * once (runs/s, steps/s, latency under load), with the workers' own journal-append and
 * checkpoint-write histograms and their CPU time (also per durable step) and peak RSS.
 *
 * Completion times come from the store's run records (`updatedAt` of the finished run), so the
 * polling that notices completion adds nothing to the measured latencies. Completion is noticed
 * by the store's run counts (one small read every 25 ms), and the records are read once all have
 * finished, after the window closed: the bench's own reads add next to nothing to the store's CPU.
 *
 * With the bus's and the store's probes (bench-servers.ts), the servers' CPU is read at the same
 * two moments as the workers' and reported per durable step beside it (server-cost.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client, isFinishedRun } from '@baton/client';
import type { AnyWorkflowDefinition } from '@baton/core';
import type { RunRecord, Store } from '@baton/core/adapter';
import { WorkerFleet, type CrashEnvironment, type WorkerProcess } from '@baton/testing/crash';
import { processUsage } from '../process-usage.js';
import { systemCpu } from '../server-cost.js';
import { ServerWindowMeter, type MeasuredServer } from '../server-probes.js';
import {
  histogram,
  histogramPercentiles,
  mergeHistograms,
  requireHistogram,
  scrape,
  since,
  type Histogram,
} from '../prometheus.js';
import { percentiles, type BusKind, type Progress, type StoreKind, type ThroughputResult } from '../types.js';
import { chain10, fanout, payload, STEPS_PER_RUN } from '../workflows.js';

export const WORKFLOWS_MODULE = fileURLToPath(new URL('../workflows.ts', import.meta.url));

type ThroughputWorkload = 'chain10' | 'fanout' | 'payload';

// Typed as any workflow: the input is picked per workload at run time, not per definition.
const WORKFLOWS: Record<ThroughputWorkload, AnyWorkflowDefinition> = { chain10, fanout, payload };
const INPUTS: Record<ThroughputWorkload, (i: number) => unknown> = {
  chain10: (i) => i,
  fanout: (i) => i,
  payload: () => null,
};
/** Enqueues outstanding at once while a batch goes out. */
const ENQUEUE_IN_FLIGHT = 256;
/** How often the store's run counts are read while runs are awaited. */
const COUNT_POLL_MS = 25;

export interface ThroughputOptions {
  workload: ThroughputWorkload;
  transport: BusKind;
  store: StoreKind;
  env: CrashEnvironment;
  runs: number;
  concurrency: number;
  workers: number;
  /** Runs executed alone for the single-run latency. */
  singleRuns?: number;
  /** The bus and the store whose CPU is read over the phase (none: only the workers'). */
  servers?: readonly MeasuredServer[];
  progress: Progress;
}

interface Started {
  runId: string;
  enqueuedAt: number;
}

export async function runThroughput(options: ThroughputOptions): Promise<ThroughputResult> {
  const { workload, env, progress } = options;
  const workflow = WORKFLOWS[workload];
  const steps = STEPS_PER_RUN[workload];
  // With --encrypt, the key main.ts put in the environment the worker processes inherit.
  const encryptionKeys = process.env.BATON_ENCRYPTION_KEYS;
  const client = new Client({
    transport: env.transport,
    store: env.store,
    ...(encryptionKeys !== undefined && { payloadProtection: { encryptionKeys } }),
  });
  const fleet = new WorkerFleet({
    ...env.workerEnv,
    BATON_WORKFLOWS: WORKFLOWS_MODULE,
    BATON_CONCURRENCY: String(options.concurrency),
    BATON_LOG_LEVEL: 'info',
  });
  try {
    progress.log(`${workload}: starting ${options.workers} worker process(es)`);
    const workers = await Promise.all(Array.from({ length: options.workers }, () => fleet.spawn()));
    const ports = workers.map((w) => w.httpPort);

    const enqueue = async (i: number): Promise<Started> => {
      const enqueuedAt = Date.now();
      const handle = await client.start(workflow, INPUTS[workload](i));
      return { runId: handle.runId, enqueuedAt };
    };

    // Warm-up: connections, JIT, the workers' first claims.
    const finishedBeforeWarmUp = await finishedRuns(env.store);
    const warm = await enqueueAll(Math.min(50, options.runs), enqueue);
    await waitFinished(env.store, warm, finishedBeforeWarmUp, progress, `${workload} warm-up`, workers);

    // One run at a time.
    const singleCount = options.singleRuns ?? 30;
    progress.start(`${workload} one run at a time`, singleCount);
    const single: number[] = [];
    for (let i = 0; i < singleCount; i++) {
      const started = await enqueue(i);
      const record = await pollUntilFinished(env.store, started.runId);
      single.push(record.updatedAt - started.enqueuedAt);
      progress.tick(i + 1);
    }
    progress.done();

    const finishedBefore = await finishedRuns(env.store);
    const before = await Promise.all(ports.map((port) => scrape(port)));
    // The servers first: a shared one is watched for a while with the workers idle (its background).
    const meter = await ServerWindowMeter.begin(options.servers ?? []);
    const usageBefore = await Promise.all(workers.map((w) => processUsage(w.pid)));

    const started = await enqueueAll(options.runs, enqueue, progress, `${workload} enqueue`);
    const { records, atClose: usageAfter } = await waitFinished(
      env.store,
      started,
      finishedBefore,
      progress,
      `${workload} ${options.runs} runs`,
      workers,
      // The window closes the moment the last run is counted finished, before the records are read.
      async () => {
        const [usage] = await Promise.all([
          Promise.all(workers.map((w) => processUsage(w.pid))),
          meter.end(),
        ]);
        return usage;
      },
    );
    // After the CPU readings: a scrape is work for the worker processes.
    const after = await Promise.all(ports.map((port) => scrape(port)));
    const failed = records.filter((r) => r.status !== 'completed');
    if (failed.length > 0) {
      throw new Error(
        `${failed.length} of ${records.length} ${workload} runs did not complete (first: ${failed[0]?.runId} ` +
          `${failed[0]?.status} ${JSON.stringify(failed[0]?.error)}); the figures would be meaningless`,
      );
    }

    const firstEnqueue = Math.min(...started.map((s) => s.enqueuedAt));
    const lastFinish = Math.max(...records.map((r) => r.updatedAt));
    const wallSeconds = (lastFinish - firstEnqueue) / 1000;
    const enqueuedAt = new Map(started.map((s) => [s.runId, s.enqueuedAt]));
    const singleLatency = percentiles(single);
    const workerUsage = usageAfter.map((u, i) => ({
      pid: u.pid,
      cpuSeconds: u.cpuSeconds - (usageBefore[i]?.cpuSeconds ?? 0),
      peakRssMiB: u.peakRssMiB,
    }));
    const workerCpuSeconds = workerUsage.reduce((sum, u) => sum + u.cpuSeconds, 0);
    const windowSteps = options.runs * steps;
    const servers = meter.windows(windowSteps);
    const window = (name: string): Histogram =>
      mergeHistograms(
        after.map((text, i) => since(requireHistogram(text, name), histogram(before[i]!, name))),
      );
    return {
      workload,
      transport: options.transport,
      store: options.store,
      runs: options.runs,
      stepsPerRun: steps,
      wallSeconds,
      runsPerSecond: options.runs / wallSeconds,
      stepsPerSecond: (options.runs * steps) / wallSeconds,
      runLatency: percentiles(records.map((r) => r.updatedAt - (enqueuedAt.get(r.runId) ?? NaN))),
      singleRunLatency: singleLatency,
      perStepOverheadMs: singleLatency.p50 / steps,
      journalAppend: histogramPercentiles(window('baton_journal_append_duration_seconds')),
      checkpointWrite: histogramPercentiles(window('baton_checkpoint_write_duration_seconds')),
      workers: workerUsage,
      workerCpuSeconds,
      workerCpuMicrosPerStep: (workerCpuSeconds * 1e6) / windowSteps,
      cpu: servers.length > 0 ? systemCpu(windowSteps, workerCpuSeconds, servers) : null,
    };
  } finally {
    await fleet.shutdown();
  }
}

async function enqueueAll(
  count: number,
  enqueue: (i: number) => Promise<Started>,
  progress?: Progress,
  label?: string,
): Promise<Started[]> {
  const started: Started[] = new Array(count);
  let next = 0;
  let done = 0;
  if (progress && label) progress.start(label, count);
  const lane = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      started[i] = await enqueue(i);
      done++;
      if (progress && done % 64 === 0) progress.tick(done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(ENQUEUE_IN_FLIGHT, count) }, lane));
  if (progress && label) progress.done();
  return started;
}

async function pollUntilFinished(store: Store, runId: string, timeoutMs = 60_000): Promise<RunRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const record = await store.runs.get(runId);
    if (record && isFinishedRun(record.status)) return record;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not finish within ${timeoutMs} ms`);
    await sleep(1);
  }
}

/** Runs of the namespace the store counts finished (completed, failed or cancelled). */
async function finishedRuns(store: Store): Promise<number> {
  const counts = await store.runs.count();
  return Object.entries(counts.byStatus).reduce(
    (sum, [status, count]) => sum + (isFinishedRun(status) ? count : 0),
    0,
  );
}

/** Records read at once while the finished runs are fetched. */
const READ_IN_FLIGHT = 64;

/**
 * Waits until every run of `started` finished, by the store's run counts (`finishedBefore` were
 * finished before they were enqueued): one small read per round, so the bench's polling is next
 * to no load on the store whose CPU is measured. Then `atClose` runs (the window's end readings)
 * and the runs' records are read, for their completion times.
 */
async function waitFinished<T = undefined>(
  store: Store,
  started: readonly Started[],
  finishedBefore: number,
  progress: Progress,
  label: string,
  /** The worker processes: one that dies fails the wait at once, with its last words. */
  workers: readonly WorkerProcess[],
  atClose?: () => Promise<T>,
  timeoutMs = 600_000,
): Promise<{ records: RunRecord[]; atClose: T }> {
  const deadline = Date.now() + timeoutMs;
  progress.start(label, started.length);
  for (;;) {
    const finished = (await finishedRuns(store)) - finishedBefore;
    progress.tick(Math.min(finished, started.length));
    if (finished >= started.length) break;
    const dead = workers.find((w) => !w.alive);
    if (dead !== undefined) {
      throw new Error(
        `${label}: a worker process exited with ${started.length - finished} runs unfinished ` +
          `(out of memory under a --max-old-space-size in BATON_WORKER_NODE_ARGS?):\n${dead.describe(10)}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(`${started.length - finished} runs did not finish within ${timeoutMs / 1000} s`);
    }
    await sleep(COUNT_POLL_MS);
  }
  const closed = (atClose ? await atClose() : undefined) as T;
  progress.done();
  const records: RunRecord[] = new Array(started.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < started.length) {
      const i = next++;
      const record = await store.runs.get(started[i]!.runId);
      if (!record || !isFinishedRun(record.status)) {
        throw new Error(
          `${label}: the store counts every run finished, but run ${started[i]!.runId} is ` +
            `${record?.status ?? 'missing'}; the figures would be meaningless`,
        );
      }
      records[i] = record;
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_IN_FLIGHT, started.length) }, lane));
  return { records, atClose: closed };
}
