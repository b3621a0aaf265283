/**
 * The human report: one table per part, then Baton's figures as ratios to the baseline users would
 * pick instead (BullMQ's step-job pattern, same Redis, same run) and to the raw floors of the
 * services (same run), so a figure means something on any machine.
 */
import type { ServerWindow, SystemCpu } from './server-cost.js';
import type { BaselineResult, BenchReport, Percentiles } from './types.js';

const ms = (v: number | undefined): string =>
  v === undefined || Number.isNaN(v) ? '-' : v === Infinity ? '>5000' : v < 10 ? v.toFixed(2) : v.toFixed(0);
const num = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '-');
const pct = (p: Percentiles | null): string => (p ? `${ms(p.p50)} / ${ms(p.p99)}` : '-');
/** A ratio to two decimals; `-` when the divisor is 0 (a figure under the readings' resolution). */
const ratio = (a: number, b: number): string => (b > 0 && Number.isFinite(a / b) ? (a / b).toFixed(2) : '-');

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

/** A result's bus and store, as the tables name them. */
const pairOf = (t: { transport: string; store: string }): string => `${t.transport}+${t.store}`;

function find(list: readonly BaselineResult[], needle: string): BaselineResult | undefined {
  return list.find((b) => b.name.toLowerCase().includes(needle));
}

export function renderReport(report: BenchReport): string {
  const out: string[] = [];
  const c = report.config;
  out.push(
    `Baton bench  ${report.startedAt}  ${(c.pairs ?? [c]).map((p) => `${p.transport}+${p.store}`).join(',')}  runs=${c.runs} concurrency=${c.concurrency} ` +
      `workers=${c.workers} runtime=${c.runtime}${c.pipelineSteps ? ' pipelined-steps' : ''}${c.encrypt ? ' encrypted' : ''}  node ${report.machine.node}, ${report.machine.cpus} cpus (${report.machine.cpuModel})`,
  );
  if (c.smoke === true) out.push('', SMOKE_WARNING);
  if (report.servers.length > 0)
    out.push(
      '',
      `Servers: ${report.servers.map((s) => `${s.kind} ${s.private ? 'private (started for this run)' : 'shared'}`).join(', ')}`,
    );
  const manyPairs = new Set(report.throughput.map(pairOf)).size > 1;
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
          manyPairs ? `${t.workload} ${pairOf(t)}` : t.workload,
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
  out.push(...cpuTable(report));
  out.push(...headline(report));
  const chains = report.throughput.filter((t) => t.workload === 'chain10');
  for (const chain of others.length > 0 ? chains : []) {
    out.push('', chains.length > 1 ? `chain10 ${pairOf(chain)} as ratios` : 'chain10 as ratios');
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
    for (const b of report.baselines) {
      const theirs = b.cpu;
      const ours = chain.cpu;
      if (!theirs || !ours) continue;
      if (ours.totalMicrosPerStep !== null && theirs.totalMicrosPerStep !== null)
        rows.push([
          `total CPU µs/step vs ${b.name} worker + Redis`,
          ratio(ours.totalMicrosPerStep, theirs.totalMicrosPerStep),
          `${LOWER_IS_BETTER} (worker + bus + store; 1 = as much CPU per step in all as BullMQ)`,
        ]);
      if (ours.storeMicrosPerStep !== null && theirs.storeMicrosPerStep !== null)
        rows.push([
          `store CPU µs/step vs ${b.name} Redis`,
          ratio(ours.storeMicrosPerStep, theirs.storeMicrosPerStep),
          `${LOWER_IS_BETTER} (the shared ceiling a fleet meets${ours.busIsStore ? '; bus and store are one server' : ''})`,
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

/**
 * The headline, one row per pair and one per BullMQ concurrency, all of one run: chain10's steps/s
 * and one run's p50 beside BullMQ's, the SIGKILL-to-resumed time of the recovery workload, and
 * the store's CPU per step with the steps/s one core of that store could serve at that cost
 * (1,000,000 / µs per step): a fleet's ceiling on one store, whatever its number of workers.
 */
function headline(report: BenchReport): string[] {
  const chains = report.throughput.filter((t) => t.workload === 'chain10');
  const bullmq = report.baselines.filter((b) => b.name.toLowerCase().startsWith('bullmq'));
  if (chains.length === 0 || bullmq.length === 0) return [];
  const c100 = bullmq.find((b) => b.name.includes('c=100')) ?? bullmq[bullmq.length - 1]!;
  const singleOf = (b: BaselineResult): Percentiles | undefined =>
    (b as { singleRun?: Percentiles }).singleRun;
  const single = singleOf(c100);
  const ceiling = (micros: number | null | undefined): string =>
    micros === null || micros === undefined || micros <= 0 ? '-' : num(1_000_000 / micros);
  const storeCell = (cpu: SystemCpu | null | undefined): string =>
    cpu?.storeMicrosPerStep === null || cpu?.storeMicrosPerStep === undefined
      ? '-'
      : `${num(cpu.storeMicrosPerStep)}${cpu.busIsStore ? ' (bus too)' : ''}`;
  const rows = chains.map((t) => {
    const recovery = report.recovery.find((r) => r.transport === t.transport && r.store === t.store);
    return [
      `Baton ${pairOf(t)}`,
      num(t.stepsPerSecond),
      ratio(t.stepsPerSecond, c100.opsPerSecond),
      ms(t.singleRunLatency.p50),
      single ? ratio(t.singleRunLatency.p50, single.p50) : '-',
      recovery ? `${ms(recovery.killToResume.p50)} / ${ms(recovery.killToResume.max)}` : '-',
      storeCell(t.cpu),
      ceiling(t.cpu?.storeMicrosPerStep),
    ];
  });
  for (const b of bullmq) {
    const own = singleOf(b);
    rows.push([
      b.name,
      num(b.opsPerSecond),
      ratio(b.opsPerSecond, c100.opsPerSecond),
      own ? ms(own.p50) : '-',
      own && single ? ratio(own.p50, single.p50) : '-',
      '-',
      storeCell(b.cpu),
      ceiling(b.cpu?.storeMicrosPerStep),
    ]);
  }
  return [
    '',
    `Headline (chain10; steps/s and one run against ${c100.name}; store CPU per step and what one store core serves)`,
    table(
      [
        'who',
        'steps/s',
        `vs ${c100.name}`,
        'one run p50 ms',
        `vs ${c100.name}`,
        'SIGKILL->resumed p50 / max ms',
        'store µs/step',
        'steps/s per store core',
      ],
      rows,
    ),
  ];
}

/** A server's µs per step for the CPU table: `-` when unread, `*` when the server is shared. */
function serverCell(window: ServerWindow | undefined, micros: number | null): string {
  if (window === undefined) return '-';
  if (micros === null) return `- (${window.server}: unread)`;
  return `${num(micros)}${window.private ? '' : '*'} ${window.server}`;
}

/** Per-step counters of the store worth a column: Redis commands and INFO cpu, PostgreSQL transactions and WAL. */
function storeDetail(window: ServerWindow | undefined): string {
  if (window === undefined) return '';
  const p = window.perStep;
  const fixed = (v: number | undefined, digits = 2): string =>
    v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(digits);
  // INFO cpu is the server's own count of the same CPU, to the microsecond: the cross-check.
  if (window.server === 'redis')
    return `${fixed(p.commands)} commands (INFO cpu: ${num(p.infoCpuMicros ?? NaN)} µs)`;
  if (window.server === 'postgres')
    return `${fixed(p.transactions)} write xacts, ${fixed(p.commits)} commits, ${num(p.walBytes ?? NaN)} WAL B`;
  return '';
}

/**
 * "CPU per durable step": for each throughput workload and each baseline with a process of its
 * own, the worker's, the bus's and the store's CPU over the same phase, and their total.
 */
function cpuTable(report: BenchReport): string[] {
  const rows: Array<{ name: string; cpu: SystemCpu }> = [];
  for (const t of report.throughput)
    if (t.cpu) rows.push({ name: `${t.workload} ${t.transport}+${t.store}`, cpu: t.cpu });
  for (const b of report.baselines) if (b.cpu) rows.push({ name: b.name, cpu: b.cpu });
  if (rows.length === 0) return [];
  const out = [
    '',
    'CPU per durable step (µs of user + system CPU over the throughput phase / the steps it completed)',
    table(
      ['what', 'steps', 'worker', 'bus', 'store', 'total', 'store per step'],
      rows.map(({ name, cpu }) => {
        const bus = cpu.servers.find((s) => s.role === 'bus');
        const store = cpu.servers.find((s) => s.role === 'store' || s.role === 'bus+store');
        return [
          name,
          num(cpu.steps),
          num(cpu.workerMicrosPerStep),
          cpu.busIsStore ? '(in store)' : serverCell(bus, cpu.busMicrosPerStep),
          serverCell(store, cpu.storeMicrosPerStep),
          cpu.totalMicrosPerStep === null ? '-' : num(cpu.totalMicrosPerStep),
          storeDetail(store),
        ];
      }),
    ),
  ];
  const shared = new Map<string, ServerWindow[]>();
  for (const { cpu } of rows) {
    for (const s of cpu.servers) if (!s.private) shared.set(s.server, [...(shared.get(s.server) ?? []), s]);
  }
  for (const [server, windows] of shared) {
    const background = windows
      .map((w) =>
        w.backgroundCpuPerSecond === null ? '-' : `${(w.backgroundCpuPerSecond * 100).toFixed(0)}%`,
      )
      .join(', ');
    const net = windows
      .map((w) => (w.netCpuMicrosPerStep === null ? '-' : num(w.netCpuMicrosPerStep)))
      .join(', ');
    out.push(
      `* ${server} is a shared server: its CPU includes everyone else's load (a core's ${background} ` +
        `just before the phase, workers idle; less that, µs/step: ${net})`,
    );
  }
  for (const { name, cpu } of rows) {
    for (const s of cpu.servers) {
      if (s.unreadable !== null) out.push(`${name}: ${s.server}'s CPU not read: ${s.unreadable}`);
    }
  }
  return out;
}
