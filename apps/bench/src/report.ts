/**
 * The human report: one table per part, then Baton's figures as ratios to the baseline users would
 * pick instead (BullMQ's step-job pattern, same Redis, same run) and to the raw floors of the
 * services (same run), so a figure means something on any machine.
 */
import type { BaselineResult, BenchReport, Percentiles } from './types.js';

const ms = (v: number | undefined): string =>
  v === undefined || Number.isNaN(v) ? '-' : v === Infinity ? '>5000' : v < 10 ? v.toFixed(2) : v.toFixed(0);
const num = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '-');
const pct = (p: Percentiles | null): string => (p ? `${ms(p.p50)} / ${ms(p.p99)}` : '-');

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Printed first and last with --smoke: the figures are not measurements. */
export const SMOKE_WARNING =
  'SMOKE RUN: these figures mean nothing: a handful of runs and one kill are too few for a rate or ' +
  'a percentile to settle. The run only proves the bench works; never compare, quote or publish ' +
  'its figures. Run without --smoke for figures.';

/** Which way each ratio reads, in the ratio table's last column. */
const HIGHER_IS_BETTER = 'higher is better';
const LOWER_IS_BETTER = 'lower is better';

function find(list: readonly BaselineResult[], needle: string): BaselineResult | undefined {
  return list.find((b) => b.name.toLowerCase().includes(needle));
}

export function renderReport(report: BenchReport): string {
  const out: string[] = [];
  const c = report.config;
  out.push(
    `Baton bench  ${report.startedAt}  ${c.transport}+${c.store}  runs=${c.runs} concurrency=${c.concurrency} ` +
      `workers=${c.workers} runtime=${c.runtime}${c.pipelineSteps ? ' pipelined-steps' : ''}${c.encrypt ? ' encrypted' : ''}  node ${report.machine.node}, ${report.machine.cpus} cpus (${report.machine.cpuModel})`,
  );
  if (c.smoke === true) out.push('', SMOKE_WARNING);
  if (report.throughput.length > 0) {
    out.push('', 'Throughput (latencies in ms, p50 / p99)');
    out.push(
      table(
        [
          'workload',
          'runs/s',
          'steps/s',
          'run (load)',
          'one run',
          'per step',
          'journal append',
          'checkpoint',
          'cpu s',
          'cpu µs/step',
          'peak RSS MiB',
        ],
        report.throughput.map((t) => [
          t.workload,
          num(t.runsPerSecond),
          num(t.stepsPerSecond),
          pct(t.runLatency),
          pct(t.singleRunLatency),
          ms(t.perStepOverheadMs),
          pct(t.journalAppend),
          pct(t.checkpointWrite),
          t.workers.map((w) => w.cpuSeconds.toFixed(1)).join(','),
          num(t.workerCpuMicrosPerStep),
          t.workers.map((w) => w.peakRssMiB.toFixed(0)).join(','),
        ]),
      ),
    );
  }
  if (report.recovery.length > 0) {
    out.push('', 'Recovery (ms)');
    out.push(
      table(
        [
          'bus+store',
          'SIGKILL->resume p50',
          'max',
          'samples',
          'SIGTERM->resume p50',
          'max',
          'samples',
          'hand-off->resume p50',
          'max',
          'bytes read per resume (kill / term)',
        ],
        report.recovery.map((r) => [
          r.replacementDelayMs > 0
            ? `${r.transport}+${r.store} (replacement after ${r.replacementDelayMs} ms)`
            : `${r.transport}+${r.store}`,
          ms(r.killToResume.p50),
          ms(r.killToResume.max),
          String(r.killToResume.count),
          ms(r.termToResume.p50),
          ms(r.termToResume.max),
          String(r.termToResume.count),
          ms(r.handoffToResume.p50),
          ms(r.handoffToResume.max),
          `${r.killResumeReadBytes ?? '-'} / ${r.termResumeReadBytes ?? '-'}`,
        ]),
      ),
    );
  }
  const others = [...report.baselines, ...report.floors];
  if (others.length > 0) {
    out.push('', 'Baselines and floors (same run, same services)');
    out.push(
      table(
        ['name', 'ops/s', 'p50 ms', 'p99 ms', 'worker cpu s', 'cpu µs/step', 'what'],
        others.map((b) => [
          b.name,
          num(b.opsPerSecond),
          ms(b.latency?.p50),
          ms(b.latency?.p99),
          b.workerCpuSeconds === undefined ? '-' : b.workerCpuSeconds.toFixed(2),
          b.workerCpuMicrosPerStep === undefined ? '-' : num(b.workerCpuMicrosPerStep),
          b.detail.length > 90 ? `${b.detail.slice(0, 89)}…` : b.detail,
        ]),
      ),
    );
  }
  const chain = report.throughput.find((t) => t.workload === 'chain10');
  if (chain && others.length > 0) {
    out.push('', 'chain10 as ratios');
    const rows: string[][] = [];
    for (const b of report.baselines) {
      rows.push([
        `steps/s vs ${b.name}`,
        (chain.stepsPerSecond / b.opsPerSecond).toFixed(2),
        HIGHER_IS_BETTER,
      ]);
    }
    for (const b of report.baselines) {
      if (b.workerCpuMicrosPerStep === undefined) continue;
      rows.push([
        `worker CPU µs/step vs ${b.name}`,
        (chain.workerCpuMicrosPerStep / b.workerCpuMicrosPerStep).toFixed(2),
        `${LOWER_IS_BETTER} (1 = as much worker CPU per step as BullMQ)`,
      ]);
    }
    const single = (report.baselines[0] as { singleRun?: Percentiles } | undefined)?.singleRun;
    if (single)
      rows.push([
        `one run p50 vs BullMQ one run p50`,
        (chain.singleRunLatency.p50 / single.p50).toFixed(2),
        LOWER_IS_BETTER,
      ]);
    const js = find(report.floors, 'jetstream');
    if (js) {
      rows.push([
        `steps/s vs ${js.name} msgs/s`,
        (chain.stepsPerSecond / js.opsPerSecond).toFixed(2),
        `${HIGHER_IS_BETTER} (1 = as fast as the bare bus)`,
      ]);
      if (js.latency)
        rows.push([
          `per-step overhead / publish-ack p50`,
          (chain.perStepOverheadMs / js.latency.p50).toFixed(1),
          `${LOWER_IS_BETTER} (in bare publish round trips per step)`,
        ]);
    }
    for (const key of ['redis', 'postgres', 'kafka']) {
      const f = find(report.floors, key);
      if (f?.latency)
        rows.push([
          `per-step overhead / ${f.name} p50`,
          (chain.perStepOverheadMs / f.latency.p50).toFixed(1),
          `${LOWER_IS_BETTER} (in bare ${key} round trips per step)`,
        ]);
    }
    out.push(table(['figure', 'ratio', 'reads'], rows));
  }
  if (c.smoke === true) out.push('', SMOKE_WARNING);
  return out.join('\n');
}
