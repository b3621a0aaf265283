import { describe, expect, it } from 'vitest';
import { parseOptions } from './options.js';
import { renderReport, SMOKE_WARNING } from './report.js';
import { percentiles, type BenchConfig, type BenchReport, type ThroughputResult } from './types.js';

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
    throughput: [chain],
    recovery: [],
    baselines: [bullmq],
    floors: [floor('JetStream publish+ack'), floor('Redis SET'), floor('Postgres INSERT')],
  };
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
});
