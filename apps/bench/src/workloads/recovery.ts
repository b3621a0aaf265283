/**
 * Recovery: how long a run stands still when the worker executing it goes away.
 *
 * Three real worker processes (apps/worker, default settings but BATON_CONCURRENCY) execute the
 * crash suite's chain workflow, whose activities record every execution (process, start time) in
 * a Postgres ledger. A steady load of runs is kept in flight while a random worker with activities
 * in flight is signalled, again and again:
 * - SIGKILL: the victim dies mid-activity; a replacement is spawned, as an orchestrator would;
 * - SIGTERM: the victim drains (in-flight activities finish) and hands its runs off, then exits 0.
 * The latency of an interrupted run is the time from the signal until its next activity starts on
 * another process, read from the ledger. Every invariant of the crash suite is checked at the end
 * of each part: numbers from a run that lost or duplicated work are refused, not reported.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CrashWorld, resumeLatencies, type WorkerProcess } from '@baton/testing/crash';
import { TEST_POSTGRES_URL_ENV } from '@baton/testing/servers';
import { refuseBrokenRuns, SteadyLoad } from './crash-load.js';
import { benchEnvironmentFactory, type BenchUrls } from '../environment.js';
import { counterValue, scrape } from '../prometheus.js';
import { percentiles, type BusKind, type Progress, type RecoveryResult, type StoreKind } from '../types.js';

export interface RecoveryOptions {
  transport: BusKind;
  store: StoreKind;
  /** SIGKILLs, and as many SIGTERMs unless `terms` says otherwise. */
  kills: number;
  terms?: number;
  /** The bus, the store, and Postgres for the ledger (`postgresUrl`). */
  urls: BenchUrls;
  progress?: Progress;
  /** Runs kept in flight while workers are signalled. @defaultValue 60 */
  runs?: number;
  /**
   * Delay before a SIGKILLed worker's replacement is spawned. A replacement starting at once
   * shares the CPUs with the failover it should not take part in; a delay shows what that costs.
   * @defaultValue 0
   */
  replacementDelayMs?: number;
}

type Signal = 'SIGKILL' | 'SIGTERM';
type Execution = Awaited<ReturnType<CrashWorld['ledger']['executions']>>[number];
interface Interruption {
  pid: number;
  at: number;
}

const WORKERS = 3;
/** Ten steps of 200-400 ms: a run spans several signals' worth of time, and one is always busy. */
const SHAPE = { steps: 10, minDelayMs: 200, maxDelayMs: 400 };
/**
 * The worker's defaults, but room for every run at once (a resumed run is taken at once, not
 * queued behind start messages). The harness sets a short NATS ack wait for its own tests; the
 * empty value restores the default. Kafka keeps its defaults too (12 partitions, 10 s session).
 */
const WORKER_ENV = { BATON_CONCURRENCY: '200', BATON_NATS_ACK_WAIT_MS: '' };

export async function runRecovery(opts: RecoveryOptions): Promise<RecoveryResult> {
  const terms = opts.terms ?? opts.kills;
  const kill = await measurePart('SIGKILL', opts.kills, opts);
  const term = await measurePart('SIGTERM', terms, opts);
  return {
    transport: opts.transport,
    store: opts.store,
    killToResume: percentiles(kill.latencies),
    termToResume: percentiles(term.latencies),
    killResumeReadBytes: kill.readBytesPerResume,
    termResumeReadBytes: term.readBytesPerResume,
    handoffToResume: percentiles(term.afterPivot),
    kills: opts.kills,
    terms,
    replacementDelayMs: opts.replacementDelayMs ?? 0,
  };
}

/**
 * One world, `count` signals of one kind. Returns each interrupted run's latency from the signal,
 * and from the pivot (SIGKILL: the run was reaped; SIGTERM: its in-flight step finished and the
 * run was handed off) to its next step elsewhere.
 */
async function measurePart(
  signal: Signal,
  count: number,
  opts: RecoveryOptions,
): Promise<{ latencies: number[]; afterPivot: number[]; readBytesPerResume: number | null }> {
  const { progress } = opts;
  const label = `recovery ${opts.transport}+${opts.store} ${signal}`;
  progress?.start(label, count);
  const world = await createWorld(opts);
  try {
    await Promise.all(Array.from({ length: WORKERS }, () => world.fleet.spawn()));
    // On a partitioned bus the first member to join would otherwise take every partition, and
    // with it every run, before the others are assigned any.
    if (opts.transport === 'kafka') await sleep(2_000);
    const load = new SteadyLoad(world, opts.runs ?? 60, SHAPE);
    await load.topUp();

    const interruptions: Interruption[] = [];
    const reads = { bytes: 0, resumed: 0 };
    let replacement: Promise<unknown> = Promise.resolve(undefined);
    for (let i = 0; i < count; i++) {
      // Every live worker has started before the next signal: a fleet still booting would fail
      // over slower, and the number would measure start-ups instead.
      await settled(replacement);
      await load.topUp();
      const victim = await busyVictim(world, load);
      // The others resume the victim's runs: what their journal reads fetched from the bus
      // between the signal and the next one, per run they resumed.
      const resumers = world.fleet.alive.filter((w) => w !== victim && w.started);
      const before = await readCounters(resumers);
      victim.signal(signal);
      interruptions.push({ pid: victim.pid, at: victim.signalledAt ?? Date.now() });
      if (signal === 'SIGTERM') {
        const exit = await victim.exited;
        if (exit.code !== 0) {
          throw new Error(
            `${victim.name} exited with ${exit.code ?? exit.signal} after SIGTERM, not 0\n${victim.describe()}`,
          );
        }
        replacement = captured(world.fleet.spawn());
      } else {
        replacement = captured(sleep(opts.replacementDelayMs ?? 0).then(() => world.fleet.spawn()));
      }
      progress?.tick(i + 1);
      await sleep(1_500 + Math.random() * 500);
      const after = await readCounters(resumers);
      for (const [pid, end] of after) {
        const start = before.get(pid);
        if (start === undefined) continue;
        reads.bytes += end.bytes - start.bytes;
        reads.resumed += end.resumed - start.resumed;
      }
    }
    await settled(replacement);
    await world.waitForAll(180_000);

    await refuseBrokenRuns(world, label);
    const executions = await world.ledger.executions();
    const latencies = resumeLatencies(interruptions, executions);
    if (latencies.length === 0)
      throw new Error(`${label}: no signalled worker held a run that went on elsewhere`);
    const split = breakdown(signal, interruptions, executions, world.fleet.all);
    progress?.log(split.text);
    const p = percentiles(latencies);
    const readBytesPerResume = reads.resumed > 0 ? Math.round(reads.bytes / reads.resumed) : null;
    progress?.done(
      `${latencies.length} interrupted runs, p50 ${fmt(p.p50)} ms, p99 ${fmt(p.p99)} ms, max ${fmt(p.max)} ms; ` +
        `${reads.resumed} resumes read ${readBytesPerResume ?? '-'} bytes each from the bus`,
    );
    return { latencies, afterPivot: split.second, readBytesPerResume };
  } finally {
    await world.dispose();
  }
}

/**
 * The harness keeps its ledger in the Postgres that BATON_TEST_POSTGRES_URL names (read only at
 * creation): the bench's own Postgres URL is put there for that moment.
 */
async function createWorld(opts: RecoveryOptions): Promise<CrashWorld> {
  const factory = benchEnvironmentFactory(opts.transport, opts.store, opts.urls);
  const previous = process.env[TEST_POSTGRES_URL_ENV];
  process.env[TEST_POSTGRES_URL_ENV] = opts.urls.postgresUrl;
  try {
    return await CrashWorld.create(factory, { workerEnv: WORKER_ENV });
  } finally {
    if (previous === undefined) delete process.env[TEST_POSTGRES_URL_ENV];
    else process.env[TEST_POSTGRES_URL_ENV] = previous;
  }
}

/**
 * Per live worker (by pid): bytes its journal reads fetched from the bus and runs it resumed, so
 * far. A worker that cannot be scraped (it died meanwhile) is left out.
 */
async function readCounters(
  workers: readonly WorkerProcess[],
): Promise<Map<number, { bytes: number; resumed: number }>> {
  const out = new Map<number, { bytes: number; resumed: number }>();
  await Promise.all(
    workers.map(async (w) => {
      if (!w.alive) return;
      const page = await scrape(w.httpPort).catch(() => undefined);
      if (page === undefined) return;
      out.set(w.pid, {
        bytes: counterValue(page, 'baton_journal_read_bytes_total'),
        resumed: counterValue(page, 'baton_runs_resumed_total'),
      });
    }),
  );
  return out;
}

/** A random started, live worker with an activity in flight (per the ledger). */
async function busyVictim(world: CrashWorld, load: SteadyLoad, timeoutMs = 60_000): Promise<WorkerProcess> {
  const deadline = Date.now() + timeoutMs;
  let nextTopUp = Date.now() + 5_000;
  for (;;) {
    const busy = await world.ledger.busyPids();
    const candidates = world.fleet.alive.filter((w) => w.started && busy.has(w.pid));
    const victim = candidates[Math.floor(Math.random() * candidates.length)];
    if (victim) return victim;
    if (Date.now() > deadline) {
      throw new Error(
        `no worker had an activity in flight within ${timeoutMs} ms\n${world.fleet.describe()}`,
      );
    }
    if (Date.now() > nextTopUp) {
      await load.topUp();
      nextTopUp = Date.now() + 5_000;
    }
    await sleep(100);
  }
}

/**
 * Where the time of each interrupted run went, as one line for the log. SIGKILL: signal until a
 * survivor's scan reaped the run's lease (from the workers' 'reaped leases' logs), then reap until
 * the next activity started. SIGTERM: signal until the victim's in-flight activity of the run
 * finished (the drain), then until the next activity started elsewhere (hand-off and pick-up).
 */
function breakdown(
  signal: Signal,
  interruptions: readonly Interruption[],
  executions: readonly Execution[],
  workers: readonly WorkerProcess[],
): { text: string; second: number[] } {
  const byRun = new Map<string, Execution[]>();
  for (const e of executions) byRun.set(e.runId, [...(byRun.get(e.runId) ?? []), e]);
  const reapedAt = new Map<string, number[]>();
  for (const line of workers.flatMap((w) => w.logs)) {
    if (line.msg !== 'reaped leases' || !Array.isArray(line.runIds) || typeof line.time !== 'number')
      continue;
    for (const runId of line.runIds as string[])
      reapedAt.set(runId, [...(reapedAt.get(runId) ?? []), line.time]);
  }
  const first: number[] = [];
  const second: number[] = [];
  for (const { pid, at } of interruptions) {
    for (const [runId, ofRun] of byRun) {
      const lastBefore = ofRun.filter((e) => e.startedAt <= at).at(-1);
      const next = ofRun.find((e) => e.pid !== pid && e.startedAt >= at);
      if (!next || lastBefore?.pid !== pid) continue;
      const pivot =
        signal === 'SIGKILL'
          ? (reapedAt.get(runId) ?? []).filter((t) => t >= at).sort((a, b) => a - b)[0]
          : Math.max(at, lastBefore.finishedAt ?? at);
      if (pivot === undefined) continue;
      first.push(pivot - at);
      second.push(next.startedAt - pivot);
    }
  }
  const [a, b] =
    signal === 'SIGKILL'
      ? ['signal->reaped', 'reaped->next step']
      : ['signal->drained', 'drained->next step'];
  const line = (name: string, xs: number[]): string => {
    const p = percentiles(xs);
    return `${name} p50 ${fmt(p.p50)} ms, max ${fmt(p.max)} ms`;
  };
  return {
    text: `${signal} breakdown (${first.length} runs): ${line(a, first)}; ${line(b, second)}`,
    second,
  };
}

/** A spawn whose failure is kept as a value until awaited (never an unhandled rejection). */
function captured(spawn: Promise<unknown>): Promise<unknown> {
  return spawn.then(
    () => undefined,
    (err: unknown) => err ?? new Error('spawning a worker failed'),
  );
}

async function settled(spawn: Promise<unknown>): Promise<void> {
  const failure = await spawn;
  if (failure !== undefined) throw failure;
}

function fmt(ms: number): string {
  return Number.isFinite(ms) ? String(Math.round(ms)) : '-';
}
