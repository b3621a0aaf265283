/**
 * BullMQ baseline: chain10 written as BullMQ's "process step jobs" pattern. One job per run; its
 * processor keeps the next step in `job.data.step` and, after each step, saves step and value with
 * `job.updateData`, so a retried job resumes after the last finished step. That is one durable
 * write per step, the same bargain as Baton's journal append, without Baton's exactly-once
 * bookkeeping (leases, checkpoints, replay).
 *
 * Every run of this module uses a queue under a prefix of its own and obliterates it at the end.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { percentiles, type BaselineResult, type Percentiles, type Progress } from '../types.js';

/** Steps of every chain10 run. */
export const CHAIN_STEPS = 10;
/** Jobs per addBulk call. */
const ADD_CHUNK = 1_000;
/** Runs of the "one run alone" measurement unless told otherwise. */
const DEFAULT_SINGLE_RUNS = 50;
/** Unmeasured single runs first (script loading, connections). */
const WARM_UP_RUNS = 5;
/** A measurement fails when no job completes for this long. */
const STALL_MS = 30_000;

interface ChainData {
  step: number;
  x: number;
}

export interface BullmqChainOptions {
  redisUrl: string;
  runs: number;
  /** Jobs the one worker processes at once. */
  concurrency: number;
  /** Runs of the sequential "one run alone" measurement. @defaultValue 50 */
  singleRuns?: number;
  progress?: Progress;
}

export interface BullmqSingleOptions {
  redisUrl: string;
  /** Runs executed one after the other. @defaultValue 50 */
  runs?: number;
  progress?: Progress;
}

/** A BaselineResult plus evidence that every run really did its ten steps. */
export interface BullmqChainResult extends BaselineResult {
  /** Jobs of the throughput phase that completed with x = 10. */
  runsCompleted: number;
  /** Steps the processor executed in the throughput phase (runs × 10 when nothing retried). */
  stepsExecuted: number;
  /** Latency of one run executed alone (enqueue to completion). */
  singleRun: Percentiles;
}

/**
 * chain10 on BullMQ: `runs` jobs added in bulk, one worker of `concurrency`; steps/s over the wall
 * time from the first add to the last completion, latency per run from its add to its completion.
 * Also measures one run alone (see {@link runBullmqSingle}) and reports its p50 in `detail`.
 */
export async function runBullmqChain10(opts: BullmqChainOptions): Promise<BullmqChainResult> {
  const runs = positive('runs', opts.runs);
  const concurrency = positive('concurrency', opts.concurrency);
  const singleRuns = positive('singleRuns', opts.singleRuns ?? DEFAULT_SINGLE_RUNS);
  const name = `bullmq chain10 c=${concurrency}`;
  const bench = await StepJobBench.open(opts.redisUrl, concurrency);
  try {
    const singleSamples = await bench.runSequential(singleRuns);
    const singleRun = percentiles(singleSamples);
    const bulk = await bench.runBulk(runs, name, opts.progress);
    const stepsPerSecond = (runs * CHAIN_STEPS) / (bulk.wallMs / 1_000);
    opts.progress?.done(`${Math.round(stepsPerSecond).toLocaleString('en-US')} steps/s`);
    return {
      name,
      opsPerSecond: stepsPerSecond,
      latency: percentiles(bulk.latencies),
      detail:
        `${runs} jobs of ${CHAIN_STEPS} steps (job.updateData after each step), added in bulk; one worker, ` +
        `concurrency ${concurrency}; single run p50 ${singleRun.p50.toFixed(2)} ms ` +
        `(${singleRuns} runs one after the other)`,
      runsCompleted: bulk.completed,
      stepsExecuted: bulk.steps,
      singleRun,
    };
  } finally {
    await bench.close();
  }
}

/** One chain10 run alone: `runs` jobs one after the other, each awaited (add to completion). */
export async function runBullmqSingle(opts: BullmqSingleOptions): Promise<BaselineResult> {
  const runs = positive('runs', opts.runs ?? DEFAULT_SINGLE_RUNS);
  const name = 'bullmq chain10 single run';
  const bench = await StepJobBench.open(opts.redisUrl, 1);
  try {
    opts.progress?.start(name, runs);
    const started = performance.now();
    const samples = await bench.runSequential(runs, (done) => opts.progress?.tick(done));
    const wallMs = performance.now() - started;
    const latency = percentiles(samples);
    opts.progress?.done(`p50 ${latency.p50.toFixed(2)} ms`);
    return {
      name,
      opsPerSecond: (runs * CHAIN_STEPS) / (wallMs / 1_000),
      latency,
      detail:
        `${runs} jobs of ${CHAIN_STEPS} steps (job.updateData after each step), each added after the ` +
        `previous one completed; latency from add to completion`,
    };
  } finally {
    await bench.close();
  }
}

/** A queue, its one worker and the bookkeeping of completions. */
class StepJobBench {
  private stepsExecuted = 0;
  private readonly waiting = new Map<string, (finishedAt: number) => void>();
  /** The first failure (failed job, wrong result); a measurement waiting on jobs ends with it. */
  private error: Error | undefined;
  private onError: ((err: Error) => void) | undefined;
  private seq = 0;

  private readonly queue: Queue<ChainData, number>;
  private readonly worker: Worker<ChainData, number>;

  private constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    concurrency: number,
  ) {
    const queueName = 'chain10';
    this.queue = new Queue<ChainData, number>(queueName, { connection, prefix });
    const worker = new Worker<ChainData, number>(queueName, (job) => this.process(job), {
      connection,
      prefix,
      concurrency,
      autorun: false,
    });
    this.worker = worker;
    worker.on('completed', (job, result) => {
      const finishedAt = performance.now();
      if (result !== CHAIN_STEPS) {
        this.fail(new Error(`bullmq job ${job.id} finished with x = ${result}, not ${CHAIN_STEPS}`));
        return;
      }
      const resolve = this.waiting.get(job.id ?? '');
      if (resolve) {
        this.waiting.delete(job.id ?? '');
        resolve(finishedAt);
      }
    });
    worker.on('failed', (job, err) => {
      this.fail(new Error(`bullmq job ${job?.id ?? '?'} failed: ${err.message}`, { cause: err }));
    });
    // Errors of the worker's own loop (connection trouble) surface as stalls; keep them quiet here.
    worker.on('error', () => undefined);
  }

  private fail(err: Error): void {
    this.error ??= err;
    this.onError?.(err);
  }

  static async open(redisUrl: string, concurrency: number): Promise<StepJobBench> {
    // BullMQ's blocking commands need maxRetriesPerRequest null.
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    connection.on('error', () => undefined);
    try {
      await connection.connect();
    } catch (err) {
      connection.disconnect();
      throw new Error(`bullmq baseline: cannot reach Redis at ${redisUrl}: ${describe(err)}`, { cause: err });
    }
    const prefix = `baton-bench-bull-${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
    const bench = new StepJobBench(connection, prefix, concurrency);
    void bench.worker.run().catch(() => undefined);
    await Promise.all([bench.queue.waitUntilReady(), bench.worker.waitUntilReady()]);
    return bench;
  }

  /** The step-job processor: resumes at `job.data.step`, saves progress after every step. */
  private async process(job: Job<ChainData, number>): Promise<number> {
    let { step, x } = job.data;
    while (step < CHAIN_STEPS) {
      x = x + 1;
      await job.updateData({ ...job.data, step: step + 1, x });
      step++;
      this.stepsExecuted++;
    }
    return x;
  }

  /** Runs `runs` jobs one after the other; returns each one's add-to-completion milliseconds. */
  async runSequential(runs: number, tick?: (done: number) => void): Promise<number[]> {
    for (let i = 0; i < WARM_UP_RUNS; i++) await this.runOne();
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      samples.push(await this.runOne());
      tick?.(i + 1);
    }
    return samples;
  }

  private async runOne(): Promise<number> {
    const jobId = `s${++this.seq}`;
    const done = this.completion(jobId);
    const started = performance.now();
    await this.queue.add('run', { step: 0, x: 0 }, { jobId });
    const finishedAt = await this.guard(done);
    return finishedAt - started;
  }

  /** Adds `runs` jobs in chunks and waits for all; wall time from the first add to the last completion. */
  async runBulk(
    runs: number,
    label: string,
    progress: Progress | undefined,
  ): Promise<{ wallMs: number; latencies: number[]; completed: number; steps: number }> {
    const stepsBefore = this.stepsExecuted;
    const latencies: number[] = [];
    const every = Math.max(1, Math.floor(runs / 100));
    let completed = 0;
    let lastFinish = 0;
    progress?.start(label, runs);
    const all: Promise<void>[] = [];
    const started = performance.now();
    for (let first = 0; first < runs; first += ADD_CHUNK) {
      const size = Math.min(ADD_CHUNK, runs - first);
      const jobs = Array.from({ length: size }, () => ({
        name: 'run',
        data: { step: 0, x: 0 },
        opts: { jobId: `b${++this.seq}` },
      }));
      const addedAt = performance.now();
      for (const job of jobs) {
        all.push(
          this.completion(job.opts.jobId).then((finishedAt) => {
            latencies.push(finishedAt - addedAt);
            lastFinish = Math.max(lastFinish, finishedAt);
            completed++;
            if (completed % every === 0 || completed === runs) progress?.tick(completed);
          }),
        );
      }
      await this.queue.addBulk(jobs);
    }
    await this.guard(Promise.all(all), () => completed);
    return { wallMs: lastFinish - started, latencies, completed, steps: this.stepsExecuted - stepsBefore };
  }

  private completion(jobId: string): Promise<number> {
    return new Promise<number>((resolve) => this.waiting.set(jobId, resolve));
  }

  /**
   * Waits for `work`, failing on the first failed job or when nothing completes for STALL_MS
   * (`progressOf` tells whether something did).
   */
  private async guard<T>(work: Promise<T>, progressOf: () => number = () => 0): Promise<T> {
    let timer: ReturnType<typeof setInterval> | undefined;
    const failed = new Promise<never>((_, reject) => {
      if (this.error) reject(this.error);
      this.onError = reject;
      let seen = progressOf();
      let since = performance.now();
      timer = setInterval(() => {
        const now = progressOf();
        if (now !== seen) {
          seen = now;
          since = performance.now();
        } else if (performance.now() - since > STALL_MS) {
          reject(new Error(`bullmq baseline: no job completed for ${STALL_MS / 1_000} s`));
        }
      }, 1_000);
    });
    try {
      return await Promise.race([work, failed]);
    } finally {
      clearInterval(timer);
      this.onError = undefined;
    }
  }

  async close(): Promise<void> {
    await this.worker.close(true).catch(() => undefined);
    await this.queue.obliterate({ force: true }).catch(() => undefined);
    await this.queue.close().catch(() => undefined);
    // Whatever obliterate left under the prefix (meta, event stream, markers) goes too.
    await deleteByPrefix(this.connection, `${this.prefix}:`).catch(() => undefined);
    await this.connection.quit().catch(() => undefined);
  }
}

async function deleteByPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  return value;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
