/**
 * The demo's main flow: a fleet of workers on the embedded default, 50 loan applications, one
 * worker crashed mid-run, and a check of every invariant against the outside world's ledger.
 *
 * `main.ts` runs it for `npm start`; `demo.spec.ts` runs it silently in-process.
 */
import { memoryStore } from '@baton/core/memory';
import { Client } from '@baton/client';
import { makeApplicants, seededRandom } from './applicants.js';
import { demoTransport, type DemoBus } from './bus.js';
import { CrashWatch, planCrash } from './crash-watch.js';
import { createExternalSystems } from './fake-systems.js';
import { Fleet } from './fleet.js';
import { createReporter, type OutputMode, type ProgressSnapshot } from './progress.js';
import { RequestLog } from './network.js';
import { startApplications } from './scenario.js';
import { FleetStats } from './stats.js';
import { summarize, type DemoSummary } from './summary.js';

/** Knobs of one demo run; the defaults are what `npm start` shows. */
export interface DemoOptions {
  /** Loan applications to start. @defaultValue 50 */
  runs?: number;
  /** Workers in the fleet; one of them is crashed. @defaultValue 3 */
  workers?: number;
  /** Runs each worker executes at once. @defaultValue 20 */
  concurrency?: number;
  /** Lease duration: a crashed worker's runs are resumed shortly after it. @defaultValue 2000 */
  leaseMs?: number;
  /**
   * Seed of the applicants' data, the reviewers' answers and when they come, and the crash: which
   * worker and at which point. @defaultValue 7291
   */
  seed?: number;
  /** Pause between two starts, so the crash finds runs at every stage. @defaultValue 20 */
  startIntervalMs?: number;
  /**
   * Crash once the bureau has pulled credit for this share of the runs. @defaultValue drawn from
   * the seed, between 0.25 and 0.5
   */
  crashAfterPulledShare?: number;
  /** How long to wait for each run's result before calling it failed. @defaultValue 20_000 */
  resultTimeoutMs?: number;
  /**
   * The bus: `memory` needs no server; `redis` runs on the Redis transport (BullMQ and Redis
   * Streams) at BATON_DEMO_REDIS_URL. @defaultValue 'memory'
   */
  bus?: DemoBus;
  /** Where progress goes. @defaultValue 'auto' */
  output?: OutputMode;
  /** Writes the demo's output. @defaultValue process.stdout.write */
  write?: (text: string) => void;
  /**
   * Called once the scenario is over and its summary made, with the live workers still running
   * and a client on the demo's bus and store (`npm start -- --console` serves the console with
   * it); the workers stop and the bus and store close when it resolves. @defaultValue none
   */
  keepFleetWith?: (client: Client, summary: DemoSummary) => Promise<void>;
}

/** The seed `npm start` uses without `--seed`. */
export const DEFAULT_SEED = 7291;
/** Mixed into the seed for the reviewers' timing, a stream of its own (see crash-watch.ts). */
const REVIEW_STREAM = 0x72657669;

/** How long the graceful stop of the live workers may take before the demo gives up on it. */
const STOP_TIMEOUT_MS = 10_000;

/** Runs the whole demo and returns its summary; it prints nothing when `output` is 'silent'. */
export async function runDemo(options: DemoOptions = {}): Promise<DemoSummary> {
  const runs = options.runs ?? 50;
  const startedAt = Date.now();
  const reporter = createReporter(options.output ?? 'auto', options.write);

  const seed = options.seed ?? DEFAULT_SEED;
  const profiles = makeApplicants(runs, seed);
  const scores = new Map(profiles.map((p) => [p.application.applicantId, p.creditScore]));
  const systems = createExternalSystems(scores);
  // One bus and one store, shared like the real servers would be.
  const bus = demoTransport(options.bus ?? 'memory');
  const transport = bus.transport;
  // Connected here, so a Redis that is not there fails the demo before any worker starts.
  await transport.connect().catch(async (err: unknown) => {
    await bus.dispose().catch(() => undefined);
    throw err;
  });
  const store = memoryStore();
  const stats = new FleetStats();
  const requestLog = new RequestLog();
  const fleet = new Fleet({
    requestLog,
    transport,
    store,
    systems,
    stats,
    size: options.workers ?? 3,
    concurrency: options.concurrency ?? 20,
    leaseMs: options.leaseMs ?? 2_000,
  });
  const client = new Client({ transport, store });
  const completed = new Set<string>();
  const crashPlan = planCrash({
    seed,
    runs,
    workers: fleet.members.length,
    ...(options.crashAfterPulledShare !== undefined && { pulledShare: options.crashAfterPulledShare }),
  });
  const crashWatch = new CrashWatch(fleet, systems.bureau, reporter, crashPlan);

  reporter.log(
    `Baton demo: ${runs} loan applications, ${fleet.members.length} workers ` +
      `(concurrency ${options.concurrency ?? 20}, leaseMs ${options.leaseMs ?? 2_000}) on ${bus.label} + memoryStore; ` +
      `seed ${seed}: ${fleet.members[crashPlan.victim]?.id} will crash once credit is pulled for ${crashPlan.afterPulled} applicants`,
  );
  await fleet.start();
  reporter.start(() => snapshot(fleet, stats, completed.size, runs, startedAt));

  let scenario: Awaited<ReturnType<typeof startApplications>> | undefined;
  try {
    crashWatch.start();
    scenario = await startApplications({
      client,
      profiles,
      reporter,
      random: seededRandom((seed ^ REVIEW_STREAM) >>> 0),
      startIntervalMs: options.startIntervalMs ?? 20,
      resultTimeoutMs: options.resultTimeoutMs ?? 20_000,
      onCompleted: (runId) => completed.add(runId),
    });
    const results = await Promise.allSettled(scenario.results);
    // A fast run could finish before the crash condition; the demo is about the crash, so make sure it happened.
    crashWatch.crashNow();
    const crashed = fleet.crashed;
    const keep = options.keepFleetWith;
    if (keep === undefined) await withTimeout(fleet.stopLive(), STOP_TIMEOUT_MS, 'stopping the live workers');
    reporter.stop();
    const deadLetters = (await transport.deadLetters.list()).length;
    const reexecutedAfterCompletion = await countReexecutions(client, scenario.runIds, requestLog);
    const summary = summarize({
      profiles,
      runIds: scenario.runIds,
      results,
      systems,
      stats,
      crashPlan,
      crashedWorker: crashed?.id,
      crashAtMs: crashWatch.crashedAt === undefined ? undefined : crashWatch.crashedAt - startedAt,
      ownedAtCrash: crashed?.ownedAtCrash ?? [],
      duplicateStartSameRunId: scenario.duplicateStartSameRunId,
      deadLetters,
      reexecutedAfterCompletion,
      wallTimeMs: Date.now() - startedAt,
    });
    if (keep !== undefined) {
      await keep(client, summary);
      await withTimeout(fleet.stopLive(), STOP_TIMEOUT_MS, 'stopping the live workers');
    }
    return summary;
  } finally {
    crashWatch.stop();
    scenario?.cancelPendingSignals();
    reporter.stop();
    await Promise.allSettled([bus.dispose(), store.close()]);
  }
}

/**
 * Requests for a step sent after its result was journaled: a completed activity executed again.
 * The journal (when each step completed) is compared with the outside world's request log.
 */
async function countReexecutions(client: Client, runIds: string[], log: RequestLog): Promise<number> {
  let count = 0;
  for (const runId of runIds) {
    const completedAt = new Map<number, number>();
    for (const { entry } of await client.history(runId)) {
      if (entry.type !== 'ActivityCompleted') continue;
      completedAt.set(entry.seq, Math.min(entry.at, completedAt.get(entry.seq) ?? Infinity));
    }
    for (const [seq, at] of completedAt) count += log.sentAfter(`${runId}:${seq}`, at);
  }
  return count;
}

function snapshot(
  fleet: Fleet,
  stats: FleetStats,
  completed: number,
  total: number,
  startedAt: number,
): ProgressSnapshot {
  const workers = fleet.members.map((m) => {
    const counters = stats.workers.get(m.id);
    const crashed = m.ownedAtCrash !== undefined;
    return {
      id: m.id,
      crashed,
      owned: m.ownedAtCrash?.length ?? m.worker.ownedRuns.length,
      claimed: counters?.claimed ?? 0,
      completed: counters?.completed ?? 0,
    };
  });
  return {
    elapsedMs: Date.now() - startedAt,
    total,
    completed,
    inFlight: workers.filter((w) => !w.crashed).reduce((sum, w) => sum + w.owned, 0),
    suspended: stats.suspendedNow.size,
    resumed: stats.reapedClaims.size,
    workers,
  };
}

/** Rejects when `work` takes longer than `ms`; the timer never keeps the process alive. */
async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
