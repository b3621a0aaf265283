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
    workers: [],
  };
  const floor = (name: string) => ({ name, opsPerSecond: 1000, latency: p, detail: name });
  return {
    startedAt: '2026-01-02T03:04:05.678Z',
    config,
    versions: {},
    machine: { cpus: 2, cpuModel: 'test', memoryGiB: 1, node: 'v22', platform: 'linux' },
    throughput: [chain],
    recovery: [],
    baselines: [floor('BullMQ steps (concurrency 100)')],
    floors: [floor('JetStream publish+ack'), floor('Redis SET'), floor('Postgres INSERT')],
  };
}

describe('bench report text', () => {
  it('says which way every ratio reads', () => {
    const ratios = renderReport(reportOf([])).split('chain10 as ratios')[1]!;
    const rows = ratios.split('\n').filter((line) => / vs | \/ /.test(line));
    expect(rows.length).toBe(5);
    for (const row of rows) expect(row).toMatch(/(higher|lower) is better/);
    expect(ratios).toMatch(/steps\/s vs BullMQ.*higher is better/);
    expect(ratios).toMatch(/per-step overhead \/ Redis SET p50.*lower is better/);
  });

  it('says a --smoke run means nothing, first and last, and only then', () => {
    const smoke = renderReport(reportOf(['--smoke'])).split('\n');
    expect(smoke[2]).toBe(SMOKE_WARNING);
    expect(smoke.at(-1)).toBe(SMOKE_WARNING);
    expect(SMOKE_WARNING).toContain('mean nothing');
    expect(renderReport(reportOf([]))).not.toContain('SMOKE');
  });
});
