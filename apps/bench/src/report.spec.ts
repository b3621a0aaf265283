import { describe, expect, it } from 'vitest';
import { parseOptions } from './options.js';
import { renderReport, SMOKE_WARNING } from './report.js';
import { serverWindow, systemCpu, type ServerMeta, type SystemCpu } from './server-cost.js';
import {
  percentiles,
  type BaselineResult,
  type BenchConfig,
  type BenchReport,
  type ThroughputResult,
} from './types.js';

function reportOf(argv: string[]): BenchReport {
  const config = parseOptions(argv) as BenchConfig;
  const p = percentiles([10, 20, 30]);
  const chain: ThroughputResult = {
    workload: 'chain10',
    transport: 'nats',
    store: 'redis',
    runs: 20,
    stepsPerRun: 10,
    wallSeconds: 1,
    runsPerSecond: 20,
    stepsPerSecond: 200,
    runLatency: p,
    singleRunLatency: p,
    perStepOverheadMs: 2,
    journalAppend: null,
    checkpointWrite: null,
    workers: [{ pid: 1, cpuSeconds: 0.2, peakRssMiB: 100 }],
    workerCpuSeconds: 0.2,
    workerCpuMicrosPerStep: 1000,
    cpu: null,
  };
  const floor = (name: string) => ({ name, opsPerSecond: 1000, latency: p, detail: name });
  const bullmq = {
    ...floor('BullMQ steps (concurrency 100)'),
    workerCpuSeconds: 4,
    workerCpuMicrosPerStep: 4000,
  };
  return {
    startedAt: '2026-01-02T03:04:05.678Z',
    config,
    versions: {},
    machine: { cpus: 2, cpuModel: 'test', memoryGiB: 1, node: 'v22', platform: 'linux' },
    servers: [],
    throughput: [chain],
    recovery: [],
    baselines: [bullmq],
    floors: [floor('JetStream publish+ack'), floor('Redis SET'), floor('Postgres INSERT')],
  };
}

/** The CPU of a system over `steps` steps: worker seconds, and each server's CPU seconds. */
function cpuOf(
  steps: number,
  workerSeconds: number,
  servers: Array<{
    kind: ServerMeta['kind'];
    role: ServerMeta['role'];
    seconds: number;
    shared?: boolean;
    counters?: Record<string, number>;
  }>,
): SystemCpu {
  const windows = servers.map((s) =>
    serverWindow(
      { kind: s.kind, role: s.role, private: s.shared !== true, pid: 1, unreadable: undefined },
      {
        at: 0,
        cpuSeconds: 0,
        processes: 1,
        counters: Object.fromEntries(Object.keys(s.counters ?? {}).map((k) => [k, 0])),
      },
      { at: 10_000, cpuSeconds: s.seconds, processes: 1, counters: s.counters ?? {} },
      steps,
      s.shared === true
        ? {
            before: { at: -2_000, cpuSeconds: 0, processes: 1, counters: {} },
            after: { at: 0, cpuSeconds: 0, processes: 1, counters: {} },
          }
        : undefined,
    ),
  );
  return systemCpu(steps, workerSeconds, windows);
}

describe('bench report text', () => {
  it('says which way every ratio reads', () => {
    const ratios = renderReport(reportOf([])).split('chain10 as ratios')[1]!;
    const rows = ratios.split('\n').filter((line) => / vs | \/ /.test(line));
    expect(rows.length).toBe(6);
    for (const row of rows) expect(row).toMatch(/(higher|lower) is better/);
    expect(ratios).toMatch(/steps\/s vs BullMQ.*higher is better/);
    expect(ratios).toMatch(/worker CPU µs\/step vs BullMQ.*lower is better/);
    expect(ratios).toMatch(/per-step overhead \/ Redis SET p50.*lower is better/);
  });

  it("puts BullMQ's worker CPU per step beside Baton's, with their ratio", () => {
    const text = renderReport(reportOf([]));
    const [throughput, rest] = text.split('Baselines and floors');
    const [baselines, ratios] = rest!.split('chain10 as ratios');
    expect(throughput).toContain('cpu µs/step');
    expect(throughput).toMatch(/^chain10 .* 0\.2 +1,000 +100 *$/m);
    expect(baselines).toContain('cpu µs/step');
    expect(baselines).toMatch(/^BullMQ steps \(concurrency 100\) .* 4\.00 +4,000 /m);
    // Floors have no worker process of their own.
    expect(baselines).toMatch(/^Redis SET .* - +- +Redis SET *$/m);
    expect(ratios).toMatch(/worker CPU µs\/step vs BullMQ steps \(concurrency 100\) +0\.25 /);
  });

  it('leaves the worker CPU ratio out for a baseline without a worker process', () => {
    const report = reportOf([]);
    report.baselines = [{ name: 'BullMQ steps', opsPerSecond: 1000, latency: null, detail: 'in-process' }];
    const ratios = renderReport(report).split('chain10 as ratios')[1]!;
    expect(ratios).toMatch(/steps\/s vs BullMQ steps/);
    expect(ratios).not.toContain('worker CPU');
  });

  it('says a --smoke run means nothing, first and last, and only then', () => {
    const smoke = renderReport(reportOf(['--smoke'])).split('\n');
    expect(smoke[2]).toBe(SMOKE_WARNING);
    expect(smoke.at(-1)).toBe(SMOKE_WARNING);
    expect(SMOKE_WARNING).toContain('mean nothing');
    expect(renderReport(reportOf([]))).not.toContain('SMOKE');
  });

  it("puts the bus's and the store's CPU per step beside the worker's, and compares the total with BullMQ's", () => {
    const report = reportOf([]);
    report.servers = [
      { kind: 'nats', url: 'nats://127.0.0.1:1', private: true, pid: 1, note: 'private' },
      { kind: 'postgres', url: 'postgres://127.0.0.1:2/bench', private: true, pid: 2, note: 'private' },
      { kind: 'redis', url: 'redis://127.0.0.1:3', private: true, pid: 3, note: 'private' },
    ];
    report.throughput[0]!.store = 'postgres';
    report.throughput[0]!.cpu = cpuOf(30_000, 1.8, [
      { kind: 'nats', role: 'bus', seconds: 0.21 },
      {
        kind: 'postgres',
        role: 'store',
        seconds: 1.5,
        counters: { transactions: 60_000, commits: 90_000, walBytes: 30_000_000 },
      },
    ]);
    report.baselines[0]!.cpu = cpuOf(30_000, 0.75, [
      {
        kind: 'redis',
        role: 'bus+store',
        seconds: 0.45,
        counters: { commands: 300_001, infoCpuSeconds: 0.45 },
      },
    ]);
    const text = renderReport(report);
    expect(text).toContain(
      'Servers: nats private (started for this run), postgres private (started for this run)',
    );
    const table = text.split('CPU per durable step')[1]!.split('chain10 as ratios')[0]!;
    expect(table).toMatch(/^what +steps +worker +bus +store +total +store per step *$/m);
    expect(table).toMatch(
      /^chain10 nats\+postgres +30,000 +60 +7 nats +50 postgres +117 +2\.00 write xacts, 3\.00 commits, 1,000 WAL B *$/m,
    );
    expect(table).toMatch(
      /^BullMQ steps \(concurrency 100\) +30,000 +25 +\(in store\) +15 redis +40 +10\.00 commands \(INFO cpu: 15 µs\) *$/m,
    );
    expect(table).not.toContain('shared server');
    const ratios = text.split('chain10 as ratios')[1]!;
    expect(ratios).toMatch(
      /total CPU µs\/step vs BullMQ steps \(concurrency 100\) worker \+ Redis +2\.92 +lower is better/,
    );
    expect(ratios).toMatch(
      /store CPU µs\/step vs BullMQ steps \(concurrency 100\) Redis +3\.33 +lower is better/,
    );
  });

  it("marks a shared server's figure, with its background, and names a server it could not read", () => {
    const report = reportOf([]);
    report.throughput[0]!.cpu = cpuOf(10_000, 0.5, [
      { kind: 'kafka', role: 'bus', seconds: 3, shared: true },
      { kind: 'redis', role: 'store', seconds: 0.2 },
    ]);
    report.throughput.push({
      ...report.throughput[0]!,
      workload: 'fanout',
      cpu: systemCpu(10_000, 0.5, [
        serverWindow(
          {
            kind: 'kafka',
            role: 'bus',
            private: false,
            pid: undefined,
            unreadable: 'no process listens on port 9092',
          },
          { at: 0, cpuSeconds: NaN, processes: 0, counters: {} },
          { at: 1, cpuSeconds: NaN, processes: 0, counters: {} },
          10_000,
        ),
      ]),
    });
    const text = renderReport(report);
    expect(text).toMatch(/^chain10 nats\+redis +10,000 +50 +300\* kafka +20 redis +370 /m);
    expect(text).toMatch(/^\* kafka is a shared server: its CPU includes everyone else's load/m);
    expect(text).toMatch(/^fanout nats\+redis .* - \(kafka: unread\) /m);
    expect(text).toContain("fanout nats+redis: kafka's CPU not read: no process listens on port 9092");
  });

  it('names the pair of every row, and gives each pair its ratios, when a run has several', () => {
    const report = reportOf(['--pairs', 'nats+redis,kafka+postgres']);
    report.throughput.push({
      ...report.throughput[0]!,
      transport: 'kafka',
      store: 'postgres',
      stepsPerSecond: 100,
    });
    const text = renderReport(report);
    expect(text).toContain('nats+redis,kafka+postgres  runs=');
    expect(text).toMatch(/^chain10 nats\+redis +20 +200 /m);
    expect(text).toMatch(/^chain10 kafka\+postgres +20 +100 /m);
    expect(text).toMatch(
      /^chain10 nats\+redis as ratios\n(.*\n){2}steps\/s vs BullMQ steps \(concurrency 100\) +0\.20 /m,
    );
    expect(text).toMatch(
      /^chain10 kafka\+postgres as ratios\n(.*\n){2}steps\/s vs BullMQ steps \(concurrency 100\) +0\.10 /m,
    );
  });
  it('heads the report with each pair beside BullMQ: steps/s, one run, SIGKILL to resumed, and what one store core serves', () => {
    const report = reportOf(['--pairs', 'nats+redis,kafka+postgres']);
    report.throughput[0]!.cpu = cpuOf(200, 0.2, [{ kind: 'redis', role: 'store', seconds: 0.005 }]);
    report.throughput.push({
      ...report.throughput[0]!,
      transport: 'kafka',
      store: 'postgres',
      stepsPerSecond: 100,
      cpu: cpuOf(200, 0.2, [{ kind: 'postgres', role: 'store', seconds: 0.02 }]),
    });
    const kill = percentiles([80, 120, 300]);
    report.recovery.push({
      transport: 'nats',
      store: 'redis',
      killToResume: kill,
      termToResume: kill,
      killResumeReadBytes: null,
      termResumeReadBytes: null,
      handoffToResume: kill,
      kills: 3,
      terms: 3,
      replacementDelayMs: 0,
    });
    report.baselines = [
      {
        ...report.baselines[0]!,
        name: 'bullmq chain10 c=100',
        opsPerSecond: 400,
        singleRun: percentiles([5, 5, 5]),
        cpu: cpuOf(400, 0.1, [{ kind: 'redis', role: 'store', seconds: 0.008 }]),
      } as BaselineResult,
    ];
    const text = renderReport(report);
    expect(text).toMatch(/^Headline \(chain10;/m);
    // 200 steps/s against 400, one run 20 ms against 5, kills p50 120 ms, 5 ms of Redis over 200
    // steps = 25 µs per step: 40,000 steps/s per core.
    expect(text).toMatch(/^Baton nats\+redis +200 +0\.50 +20 +4\.00 +120 \/ 300 +25 +40,000 *$/m);
    expect(text).toMatch(/^Baton kafka\+postgres +100 +0\.25 +20 +4\.00 +- +100 +10,000 *$/m);
    expect(text).toMatch(/^bullmq chain10 c=100 +400 +1\.00 +5\.00 +1\.00 +- +20 +50,000 *$/m);
  });
});
