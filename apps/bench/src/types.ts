/**
 * The shapes every part of the bench reports in. Durations are milliseconds unless a name says
 * otherwise; rates are per second of wall time.
 */

import type { ServerKind, SystemCpu } from './server-cost.js';

export type BusKind = 'nats' | 'kafka' | 'redis';
export type StoreKind = 'redis' | 'postgres';

/**
 * Which servers the bench measures on (bench-servers.ts): `auto` private ones where their
 * binaries are on this machine, else the shared; `private` or fail; `shared` the BATON_TEST_* ones.
 */
export type ServerMode = 'auto' | 'private' | 'shared';

/** One server of the run, as the report lists it. */
export interface BenchServerInfo {
  kind: ServerKind;
  url: string;
  /** Started by the bench for this run: its CPU is the bench's load alone. */
  private: boolean;
  /** Its (root) process on this machine, when found. */
  pid: number | null;
  /** How it came to be used, or why its CPU cannot be read. */
  note: string;
}

/** A bus and a store the Baton workers run on. */
export interface Pair {
  transport: BusKind;
  store: StoreKind;
}

export interface BenchConfig {
  /** The first of `pairs` (the only one unless --pairs names more). */
  transport: BusKind;
  store: StoreKind;
  /** Every bus/store pair measured, in order: each runs the workloads, on the same servers. */
  pairs: Pair[];
  /** Runs per throughput workload. */
  runs: number;
  /** BATON_CONCURRENCY of each worker process. */
  concurrency: number;
  /** Worker processes for the throughput workloads. */
  workers: number;
  /** Workloads to run, in order. */
  workloads: WorkloadName[];
  /** Kills (and terms) in the recovery workload. */
  kills: number;
  /** Recovery: delay before a SIGKILLed worker's replacement is spawned. */
  replacementDelayMs: number;
  /** Runs executed one at a time for the one-run latency. */
  singleRuns: number;
  /** Run the BullMQ baseline and the floors. */
  baselines: boolean;
  /** Worker processes on the built JavaScript (as deployed) or the sources through tsx. */
  runtime: 'dist' | 'source';
  /** Workers run with BATON_PIPELINE_STEPS=true. */
  pipelineSteps: boolean;
  /** Workers and the client encrypt with a fresh key (BATON_ENCRYPTION_KEYS). */
  encrypt: boolean;
  /** Private servers for the run, or the shared ones (bench-servers.ts). */
  servers: ServerMode;
  /** --smoke: tiny sizes that prove the bench works; its figures mean nothing. */
  smoke: boolean;
  /** Where the JSON report goes. */
  out: string;
  natsUrl: string;
  redisUrl: string;
  postgresUrl: string;
  kafkaUrl: string;
}

export type WorkloadName = 'chain10' | 'fanout' | 'payload' | 'recovery';

export interface Percentiles {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export interface ProcessUsage {
  pid: number;
  /** User + system CPU seconds the process used. */
  cpuSeconds: number;
  /** Peak resident set size, MiB (VmHWM). */
  peakRssMiB: number;
}

export interface ThroughputResult {
  workload: WorkloadName;
  transport: BusKind;
  store: StoreKind;
  runs: number;
  /** Durable steps (activities journaled) per run. */
  stepsPerRun: number;
  wallSeconds: number;
  runsPerSecond: number;
  stepsPerSecond: number;
  /** Enqueue to completion, per run. */
  runLatency: Percentiles;
  /** Runs executed one at a time, nothing else running: enqueue to completion. */
  singleRunLatency: Percentiles;
  /** The single-run p50 divided by the run's steps: Baton's cost per durable step. */
  perStepOverheadMs: number;
  journalAppend: Percentiles | null;
  checkpointWrite: Percentiles | null;
  workers: ProcessUsage[];
  /** User + system CPU seconds of all worker processes over the throughput phase. */
  workerCpuSeconds: number;
  /** workerCpuSeconds per durable step of that phase (runs × stepsPerRun), in microseconds. */
  workerCpuMicrosPerStep: number;
  /**
   * The bus's and the store's CPU over the same phase beside the workers', per durable step
   * (server-cost.ts); null when neither server was measured.
   */
  cpu: SystemCpu | null;
}

export interface RecoveryResult {
  transport: BusKind;
  store: StoreKind;
  /** SIGKILL of a worker to the interrupted step starting again elsewhere. */
  killToResume: Percentiles;
  /** SIGTERM of a worker to the handed-off run's next step starting elsewhere (includes the drain). */
  termToResume: Percentiles;
  /**
   * Bytes the resuming workers' journal reads fetched from the bus per run they resumed, after the
   * SIGKILLs and after the SIGTERMs (`baton_journal_read_bytes_total` over
   * `baton_runs_resumed_total`); null when nothing was resumed.
   */
  killResumeReadBytes: number | null;
  termResumeReadBytes: number | null;
  /**
   * From the moment the SIGTERMed worker handed a run off (its in-flight step finished) to the
   * run's next step starting elsewhere: the cost of the hand-off itself.
   */
  handoffToResume: Percentiles;
  kills: number;
  terms: number;
  /** Delay before a SIGKILLed worker's replacement was spawned (0: at once). */
  replacementDelayMs: number;
}

/** One measured figure of a baseline or a floor. */
export interface BaselineResult {
  name: string;
  /** Operations (steps, messages, commands) per second. */
  opsPerSecond: number;
  latency: Percentiles | null;
  detail: string;
  /**
   * A baseline whose worker runs in a process of its own (BullMQ): that process's user + system
   * CPU seconds over the throughput phase, read from /proc as Baton's worker processes' are.
   */
  workerCpuSeconds?: number;
  /** workerCpuSeconds per step of the throughput phase, in microseconds. */
  workerCpuMicrosPerStep?: number;
  /** BullMQ: the worker process and its Redis (bus and store at once) per step of the phase. */
  cpu?: SystemCpu;
}

export interface BenchReport {
  startedAt: string;
  config: BenchConfig;
  versions: Record<string, string>;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  /** The servers measured on: private to the run or shared (their CPU then includes others' load). */
  servers: BenchServerInfo[];
  throughput: ThroughputResult[];
  recovery: RecoveryResult[];
  baselines: BaselineResult[];
  floors: BaselineResult[];
}

/** Progress of long steps: the bar in main.ts renders it. */
export interface Progress {
  start(label: string, total: number): void;
  tick(done: number): void;
  done(summary?: string): void;
  log(line: string): void;
}

export function percentiles(samples: readonly number[]): Percentiles {
  if (samples.length === 0) return { count: 0, p50: NaN, p99: NaN, max: NaN, mean: NaN };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    count: sorted.length,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted[sorted.length - 1]!,
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}
