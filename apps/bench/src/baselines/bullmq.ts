/**
 * BullMQ baseline: chain10 written as BullMQ's "process step jobs" pattern. One job per run; its
 * processor keeps the next step in `job.data.step` and, after each step, saves step and value with
 * `job.updateData`, so a retried job resumes after the last finished step. That is one durable
 * write per step, the same bargain as Baton's journal append, without Baton's exactly-once
 * bookkeeping (leases, checkpoints, replay).
 *
 * The throughput phase runs the Worker in a process of its own (bullmq-worker-main.ts), started
 * the way the bench starts Baton's worker processes, and reads its CPU time from /proc over the
 * bulk phase as it reads theirs: the bench process keeps only the Queue (adds) and a QueueEvents
 * reader (completions). Runs executed one at a time use a Worker inside the bench process, whose
 * `completed` event times them without a hop through the event stream.
 *
 * Every run of this module uses a queue under a prefix of its own and obliterates it at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { nodeInvocation, REPO_ROOT } from '@baton/testing/crash';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { processUsage } from '../process-usage.js';
import { systemCpu, type SystemCpu } from '../server-cost.js';
import { ServerWindowMeter, type ServerProbe } from '../server-probes.js';
import { percentiles, type BaselineResult, type Percentiles, type Progress } from '../types.js';
import { CHAIN_STEPS, processStepJob, QUEUE_NAME, type ChainData } from './bullmq-steps.js';
import type { FromWorker, ToWorker } from './bullmq-worker-main.js';

export { CHAIN_STEPS } from './bullmq-steps.js';

/** The BullMQ worker process's module (its build under BATON_WORKER_RUNTIME=dist). */
const WORKER_MAIN = fileURLToPath(new URL('./bullmq-worker-main.ts', import.meta.url));
/** Jobs per addBulk call. */
const ADD_CHUNK = 1_000;
/** Runs of the "one run alone" measurement unless told otherwise. */
const DEFAULT_SINGLE_RUNS = 50;
/** Unmeasured single runs first (script loading, connections). */
const WARM_UP_RUNS = 5;
/** Unmeasured jobs through the worker process before its throughput phase, as Baton's warm-up. */
const BULK_WARM_UP_RUNS = 50;
/** A measurement fails when no job completes for this long. */
const STALL_MS = 30_000;
/** How long the worker process may take to connect, and to close before it is killed. */
const WORKER_PROCESS_MS = 30_000;
/** Events a job leaves in the queue's event stream (added, waiting, active, completed), with room. */
const EVENTS_PER_JOB = 8;

export interface BullmqChainOptions {
  redisUrl: string;
  runs: number;
  /** Jobs the one worker processes at once. */
  concurrency: number;
  /** Runs of the sequential "one run alone" measurement. @defaultValue 50 */
  singleRuns?: number;
  /** The Redis at `redisUrl`, whose CPU is read over the throughput phase beside the worker's. */
  redis?: ServerProbe;
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
  /** User + system CPU seconds of the worker process over the throughput phase. */
  workerCpuSeconds: number;
  /** workerCpuSeconds per step of the throughput phase (runs × 10), in microseconds. */
  workerCpuMicrosPerStep: number;
  /** With a Redis probe: the worker's and Redis's CPU per step (Redis is BullMQ's bus and store). */
  cpu?: SystemCpu;
}

/**
 * chain10 on BullMQ: `runs` jobs added in bulk, one worker process of `concurrency`; steps/s over
 * the wall time from the first add to the last completion, latency per run from its add to its
 * completion, the worker process's CPU over that phase. Also measures one run alone (see
 * {@link runBullmqSingle}) and reports its p50 in `detail`.
 */
export async function runBullmqChain10(opts: BullmqChainOptions): Promise<BullmqChainResult> {
  const runs = positive('runs', opts.runs);
  const concurrency = positive('concurrency', opts.concurrency);
  const singleRuns = positive('singleRuns', opts.singleRuns ?? DEFAULT_SINGLE_RUNS);
  const name = `bullmq chain10 c=${concurrency}`;
  const single = await StepJobBench.open(opts.redisUrl, concurrency);
  let singleRun: Percentiles;
  try {
    singleRun = percentiles(await single.runSequential(singleRuns));
  } finally {
    await single.close();
  }
  const bench = await WorkerProcessBench.open(opts.redisUrl, concurrency, runs + BULK_WARM_UP_RUNS);
  try {
    await bench.runBulk(Math.min(BULK_WARM_UP_RUNS, runs));
    const stepsBefore = await bench.stepsExecuted();
    const meter = await ServerWindowMeter.begin(opts.redis ? [{ role: 'bus+store', probe: opts.redis }] : []);
    const usageBefore = await processUsage(bench.pid);
    const bulk = await bench.runBulk(runs, name, opts.progress);
    const [usageAfter] = await Promise.all([processUsage(bench.pid), meter.end()]);
    const steps = (await bench.stepsExecuted()) - stepsBefore;
    const stepsPerSecond = (runs * CHAIN_STEPS) / (bulk.wallMs / 1_000);
    const workerCpuSeconds = usageAfter.cpuSeconds - usageBefore.cpuSeconds;
    const workerCpuMicrosPerStep = (workerCpuSeconds * 1e6) / (runs * CHAIN_STEPS);
    const servers = meter.windows(runs * CHAIN_STEPS);
    const cpu = servers.length > 0 ? systemCpu(runs * CHAIN_STEPS, workerCpuSeconds, servers) : undefined;
    const redisMicros = cpu?.storeMicrosPerStep;
    opts.progress?.done(
      `${Math.round(stepsPerSecond).toLocaleString('en-US')} steps/s, ` +
        `${Math.round(workerCpuMicrosPerStep)} µs worker CPU per step` +
        (redisMicros == null ? '' : `, ${Math.round(redisMicros)} µs Redis CPU per step`),
    );
    return {
      name,
      opsPerSecond: stepsPerSecond,
      latency: percentiles(bulk.latencies),
      detail:
        `${runs} jobs of ${CHAIN_STEPS} steps (job.updateData after each step), added in bulk; one worker ` +
        `process, concurrency ${concurrency}; single run p50 ${singleRun.p50.toFixed(2)} ms ` +
        `(${singleRuns} runs one after the other)`,
      runsCompleted: bulk.completed,
      stepsExecuted: steps,
      singleRun,
      workerCpuSeconds,
      workerCpuMicrosPerStep,
      ...(cpu !== undefined && { cpu }),
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

/**
 * Completions of the jobs a measurement waits for, and its first failure (failed job, wrong
 * result, dead worker process): a measurement waiting on jobs ends with it.
 */
class Completions {
  private readonly waiting = new Map<string, (finishedAt: number) => void>();
  private error: Error | undefined;
  private onError: ((err: Error) => void) | undefined;

  /** A job completed (`finishedAt` from performance.now()) with `result`. */
  completed(jobId: string, result: unknown, finishedAt: number): void {
    if (result !== CHAIN_STEPS) {
      this.fail(new Error(`bullmq job ${jobId} finished with x = ${String(result)}, not ${CHAIN_STEPS}`));
      return;
    }
    const resolve = this.waiting.get(jobId);
    if (resolve) {
      this.waiting.delete(jobId);
      resolve(finishedAt);
    }
  }

  fail(err: Error): void {
    this.error ??= err;
    this.onError?.(err);
  }

  /** When `jobId` completes (performance.now()). */
  of(jobId: string): Promise<number> {
    return new Promise<number>((resolve) => this.waiting.set(jobId, resolve));
  }

  /**
   * Waits for `work`, failing on the first failure or when nothing completes for STALL_MS
   * (`progressOf` tells whether something did).
   */
  async guard<T>(work: Promise<T>, progressOf: () => number = () => 0): Promise<T> {
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
}

/** A Redis connection for BullMQ, connected, or an error that names the URL. */
async function connect(redisUrl: string): Promise<Redis> {
  // BullMQ's blocking commands need maxRetriesPerRequest null.
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  connection.on('error', () => undefined);
  try {
    await connection.connect();
  } catch (err) {
    connection.disconnect();
    throw new Error(`bullmq baseline: cannot reach Redis at ${redisUrl}: ${describe(err)}`, { cause: err });
  }
  return connection;
}

function newPrefix(): string {
  return `baton-bench-bull-${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
}

/** Obliterates the queue and deletes whatever else is left under its prefix. */
async function dispose(queue: Queue, connection: Redis, prefix: string): Promise<void> {
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close().catch(() => undefined);
  // Whatever obliterate left under the prefix (meta, event stream, markers) goes too.
  await deleteByPrefix(connection, `${prefix}:`).catch(() => undefined);
  await connection.quit().catch(() => undefined);
}

/** Runs one after the other: a queue and its one worker, both in the bench process. */
class StepJobBench {
  private readonly completions = new Completions();
  private seq = 0;

  private readonly queue: Queue<ChainData, number>;
  private readonly worker: Worker<ChainData, number>;

  private constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    concurrency: number,
  ) {
    this.queue = new Queue<ChainData, number>(QUEUE_NAME, { connection, prefix });
    const worker = new Worker<ChainData, number>(QUEUE_NAME, (job) => processStepJob(job, () => undefined), {
      connection,
      prefix,
      concurrency,
      autorun: false,
    });
    this.worker = worker;
    worker.on('completed', (job, result) => {
      this.completions.completed(job.id ?? '', result, performance.now());
    });
    worker.on('failed', (job, err) => {
      this.completions.fail(new Error(`bullmq job ${job?.id ?? '?'} failed: ${err.message}`, { cause: err }));
    });
    // Errors of the worker's own loop (connection trouble) surface as stalls; keep them quiet here.
    worker.on('error', () => undefined);
  }

  static async open(redisUrl: string, concurrency: number): Promise<StepJobBench> {
    const connection = await connect(redisUrl);
    const bench = new StepJobBench(connection, newPrefix(), concurrency);
    void bench.worker.run().catch(() => undefined);
    await Promise.all([bench.queue.waitUntilReady(), bench.worker.waitUntilReady()]);
    return bench;
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
    const done = this.completions.of(jobId);
    const started = performance.now();
    await this.queue.add('run', { step: 0, x: 0 }, { jobId });
    const finishedAt = await this.completions.guard(done);
    return finishedAt - started;
  }

  async close(): Promise<void> {
    await this.worker.close(true).catch(() => undefined);
    await dispose(this.queue, this.connection, this.prefix);
  }
}

/**
 * The throughput phase: the queue and a QueueEvents reader in the bench process, the one Worker
 * in a process of its own (bullmq-worker-main.ts). Completions come from the queue's event
 * stream, which BullMQ's finishing script writes whether or not anyone reads it, so observing
 * them costs the worker process nothing; reporting them from the worker (IPC, stdout) would add
 * work per job to the very process whose CPU is measured.
 */
class WorkerProcessBench {
  private readonly completions = new Completions();
  private seq = 0;
  private readonly stderr: string[] = [];
  private readonly exited: Promise<void>;
  private readonly messages: Array<(message: FromWorker) => void> = [];
  private closing = false;

  private constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
    private readonly queue: Queue<ChainData, number>,
    private readonly events: QueueEvents,
    private readonly eventsConnection: Redis,
    private readonly child: ChildProcess,
  ) {
    events.on('completed', ({ jobId, returnvalue }) => {
      this.completions.completed(jobId, returnvalue, performance.now());
    });
    events.on('failed', ({ jobId, failedReason }) => {
      this.completions.fail(new Error(`bullmq job ${jobId} failed: ${failedReason}`));
    });
    events.on('error', () => undefined);
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr.push(chunk);
      if (this.stderr.length > 50) this.stderr.shift();
    });
    child.on('message', (message: FromWorker) => this.messages.shift()?.(message));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (!this.closing) this.completions.fail(this.exitError(code ?? signal));
        resolve();
      });
    });
  }

  private exitError(how: number | string | null): Error {
    return new Error(`the bullmq worker process exited (${String(how)}):\n${this.stderr.join('')}`);
  }

  /** A fresh queue whose event stream keeps the events of `jobs` jobs, and its worker process. */
  static async open(redisUrl: string, concurrency: number, jobs: number): Promise<WorkerProcessBench> {
    const connection = await connect(redisUrl);
    const prefix = newPrefix();
    const maxLen = Math.max(10_000, jobs * EVENTS_PER_JOB);
    const queue = new Queue<ChainData, number>(QUEUE_NAME, {
      connection,
      prefix,
      // BullMQ trims the stream to 10,000 events by default: a reader that fell behind would miss
      // completions. The Worker's scripts read this length from the queue's meta.
      streams: { events: { maxLen } },
    });
    // Its own connection: QueueEvents blocks on XREAD. From the stream's start ('0'): the prefix is
    // new, so nothing is missed between this reader starting and the first add.
    // BullMQ leaves a connection it was handed open at close: close() below quits it.
    const eventsConnection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    eventsConnection.on('error', () => undefined);
    const events = new QueueEvents(QUEUE_NAME, {
      connection: eventsConnection,
      prefix,
      lastEventId: '0',
    });
    const node = nodeInvocation(WORKER_MAIN);
    const child = spawn(process.execPath, node.args, {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        ...node.env,
        BATON_BENCH_BULLMQ_REDIS_URL: redisUrl,
        BATON_BENCH_BULLMQ_PREFIX: prefix,
        BATON_BENCH_BULLMQ_CONCURRENCY: String(concurrency),
      },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const bench = new WorkerProcessBench(connection, prefix, queue, events, eventsConnection, child);
    try {
      await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
      await bench.reply('ready');
    } catch (err) {
      await bench.close();
      throw err;
    }
    return bench;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** The next message of the worker process, which must be of `type`. */
  private async reply(type: FromWorker['type'], timeoutMs = WORKER_PROCESS_MS): Promise<FromWorker> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const message = await Promise.race([
        new Promise<FromWorker>((resolve) => this.messages.push(resolve)),
        this.exited.then(() => {
          throw this.exitError(this.child.exitCode ?? this.child.signalCode);
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the bullmq worker process sent no '${type}' in ${timeoutMs} ms`)),
            timeoutMs,
          );
        }),
      ]);
      if (message.type !== type)
        throw new Error(`the bullmq worker process sent '${message.type}', not '${type}'`);
      return message;
    } finally {
      clearTimeout(timer);
    }
  }

  private send(message: ToWorker): void {
    if (this.child.connected) this.child.send(message);
  }

  /** Steps the worker process executed so far. */
  async stepsExecuted(): Promise<number> {
    const reply = this.reply('steps');
    this.send({ type: 'steps' });
    const message = await reply;
    return message.type === 'steps' ? message.steps : NaN;
  }

  /**
   * Adds `runs` jobs in chunks and waits for all; wall time from the first add to the last
   * completion. `label` (with `progress`) names a measured phase; without, it is a warm-up.
   */
  async runBulk(
    runs: number,
    label?: string,
    progress?: Progress,
  ): Promise<{ wallMs: number; latencies: number[]; completed: number }> {
    const latencies: number[] = [];
    const every = Math.max(1, Math.floor(runs / 100));
    let completed = 0;
    let lastFinish = 0;
    if (label) progress?.start(label, runs);
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
          this.completions.of(job.opts.jobId).then((finishedAt) => {
            latencies.push(finishedAt - addedAt);
            lastFinish = Math.max(lastFinish, finishedAt);
            completed++;
            if (label && (completed % every === 0 || completed === runs)) progress?.tick(completed);
          }),
        );
      }
      await this.queue.addBulk(jobs);
    }
    await this.completions.guard(Promise.all(all), () => completed);
    return { wallMs: lastFinish - started, latencies, completed };
  }

  /** Ends the worker process (closing its Worker; killed if it takes too long), then the queue. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.send({ type: 'close' });
      const timer = setTimeout(() => this.child.kill('SIGKILL'), WORKER_PROCESS_MS);
      await this.exited;
      clearTimeout(timer);
    }
    await this.events.close().catch(() => undefined);
    this.eventsConnection.disconnect();
    await dispose(this.queue, this.connection, this.prefix);
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
