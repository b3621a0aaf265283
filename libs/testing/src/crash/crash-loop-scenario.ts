/**
 * The crash-loop scenario (issue 22, item 4): two healthy workers, and a third beside them that
 * keeps dying as a Deployment's pod in a crash loop does (started, SIGKILLed about a second after
 * it is ready, started again). On a bus whose run queue is shared by a consumer group, every join
 * and every death of that third worker used to stop the whole group; the scenario shows whether
 * runs on the partitions it does not hold keep flowing.
 *
 * {@link crashLoopFigures} drives one world and returns what happened, without asserting: the spec
 * (describeCrashLoop) asserts completion and the invariants, the before/after script
 * (apps/worker/scripts/crash-loop-figures.ts) prints the figures. Timings are never asserted.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, afterEach } from 'vitest';
import { CrashWorld, type CrashEnvironmentFactory, NO_VIOLATIONS } from './harness.js';
import { percentile } from './invariants.js';
import type { LogLine, WorkerProcess } from './worker-processes.js';

export interface CrashLoopOptions {
  /** Runs enqueued. @defaultValue 100 */
  runs?: number;
  /** How long the crash-looping worker lives after it is ready. @defaultValue 1000 */
  lifeMs?: number;
  /** Runs enqueued per second while the loop goes on. @defaultValue 5 */
  enqueuePerSecond?: number;
  /** Give up waiting for the runs after this long (the figures then count what finished). */
  capMs: number;
  /** Extra environment for every worker (e.g. the Kafka partition ownership mode). */
  workerEnv?: Record<string, string>;
}

export interface CrashLoopFigures {
  runs: number;
  finished: number;
  /** Runs no worker executed a single activity of. */
  neverStarted: number;
  /** From the enqueue to the last run finishing (or to the cap). */
  elapsedMs: number;
  /** SIGKILLs of the crash-looping worker. */
  kills: number;
  /** Starts of the crash-looping worker that failed before it was ready (each one more crash). */
  failedStarts: number;
  /** Median time from one SIGKILL of the crash-looping worker to the next (start-up + life). */
  cycleMs: number;
  /** Activities the two healthy workers started per second while the crash loop went on. */
  healthyActivitiesPerSecond: number;
  /**
   * For each kill: how long until the healthy workers' logged partitions covered every partition
   * of the runs topic again (Kafka only; empty on a bus that logs no partitions).
   */
  partitionMovesMs: number[];
}

/** Log lines in which the Kafka run queue names the partitions a worker now reads. */
const PARTITION_LOGS = new Set(['kafka run-queue partitions assigned', 'kafka run-queue partitions owned']);

function partitionLog(line: LogLine): { at: number; partitions: number[] } | undefined {
  if (!PARTITION_LOGS.has(line.msg) || !Array.isArray(line.partitions) || typeof line.time !== 'number')
    return undefined;
  return { at: line.time, partitions: line.partitions as number[] };
}

/**
 * For each kill, the time from the SIGKILL until the healthy workers' latest logged partitions,
 * together, cover all `partitionCount` partitions. A kill after which they never do is left out.
 */
export function partitionMoveTimes(
  healthy: readonly WorkerProcess[],
  kills: readonly number[],
  partitionCount: number,
): number[] {
  const events = healthy
    .flatMap((worker, index) =>
      worker.logs.flatMap((line) => {
        const log = partitionLog(line);
        return log === undefined ? [] : [{ ...log, index }];
      }),
    )
    .sort((a, b) => a.at - b.at);
  const moves: number[] = [];
  for (const kill of kills) {
    const latest = new Map<number, number[]>();
    for (const event of events) {
      latest.set(event.index, event.partitions);
      if (event.at < kill) continue;
      const covered = new Set([...latest.values()].flat());
      if (covered.size >= partitionCount) {
        moves.push(event.at - kill);
        break;
      }
    }
  }
  return moves.sort((a, b) => a - b);
}

/** Runs the scenario in `world` and returns its figures; asserts nothing. */
export async function crashLoopFigures(
  world: CrashWorld,
  options: CrashLoopOptions,
): Promise<CrashLoopFigures> {
  const runCount = options.runs ?? 100;
  const lifeMs = options.lifeMs ?? 1_000;
  const perSecond = options.enqueuePerSecond ?? 5;
  const healthy = await Promise.all([world.fleet.spawn(), world.fleet.spawn()]);
  // Both healthy members hold partitions before the crash loop begins.
  await world.untilPartitionsSpread(healthy);

  const kills: number[] = [];
  const startErrors: string[] = [];
  let looping = true;
  const loop = (async () => {
    while (looping) {
      let looper: WorkerProcess;
      try {
        looper = await world.fleet.spawn();
      } catch (err) {
        startErrors.push((err as Error).message.split('\n')[0] ?? '');
        continue; // a start that failed is one more crash of the loop
      }
      await sleep(lifeMs);
      looper.signal('SIGKILL');
      kills.push(looper.signalledAt ?? Date.now());
      await looper.exited;
    }
  })();

  // Runs arrive once the loop has gone round once (a join and a death are behind), as a producer's
  // traffic does: each one has to be read from the run queue during the churn, not fetched in one
  // go before it began. A loop that never kills (its worker cannot start) fails the spec below.
  const firstKillBy = Date.now() + 60_000;
  while (kills.length === 0 && Date.now() < firstKillBy) await sleep(100);
  const startedAt = Date.now();
  for (let sent = 0; sent < runCount;) {
    const batch = Math.min(runCount - sent, Math.max(1, Math.round(perSecond / 5)));
    await world.enqueue(batch, { steps: 5, minDelayMs: 200, maxDelayMs: 400 });
    sent += batch;
    await sleep(Math.max(0, startedAt + (sent / perSecond) * 1_000 - Date.now()));
  }

  let finishedAt: number | undefined;
  try {
    await world.waitForAll(options.capMs);
    finishedAt = Date.now();
  } catch {
    // Past the cap: the figures say how far it got.
  }
  const churnEnd = Date.now();
  looping = false;
  await loop;

  const unfinished = new Set(await world.unfinished());
  const executions = await world.ledger.executions();
  const executed = new Set(executions.map((e) => e.runId));
  const healthyPids = new Set(healthy.map((w) => w.pid));
  const healthyDuringChurn = executions.filter(
    (e) => healthyPids.has(e.pid) && e.startedAt >= startedAt && e.startedAt <= churnEnd,
  ).length;
  const partitionCount = Number(world.fleet.env.BATON_KAFKA_PARTITIONS ?? 0);
  return {
    runs: runCount,
    finished: runCount - unfinished.size,
    neverStarted: world.runs.filter((r) => !executed.has(r.runId)).length,
    elapsedMs: (finishedAt ?? churnEnd) - startedAt,
    kills: kills.length,
    failedStarts: startErrors.length,
    cycleMs:
      kills.length < 2
        ? NaN
        : percentile(
            kills
              .slice(1)
              .map((at, i) => at - kills[i]!)
              .sort((a, b) => a - b),
            50,
          ),
    healthyActivitiesPerSecond: healthyDuringChurn / Math.max(0.001, (churnEnd - startedAt) / 1_000),
    partitionMovesMs: partitionCount > 0 ? partitionMoveTimes(healthy, kills, partitionCount) : [],
  };
}

/** One line for logs and docs. */
export function formatCrashLoopFigures(name: string, f: CrashLoopFigures): string {
  const never = f.kills - f.partitionMovesMs.length;
  const moves =
    (f.partitionMovesMs.length === 0
      ? 'the healthy workers never held every partition again after a kill'
      : `partitions of the dead member moved p50 ${percentile(f.partitionMovesMs, 50)} ms, max ${f.partitionMovesMs.at(-1)} ms (${f.partitionMovesMs.length} kills)`) +
    (never > 0 && f.partitionMovesMs.length > 0 ? `, never within the churn after ${never} kills` : '');
  return (
    `[crash loop] ${name}: ${f.finished}/${f.runs} runs finished, ${f.neverStarted} never started, ` +
    `${(f.elapsedMs / 1_000).toFixed(1)} s, ${f.kills} SIGKILLs of the crash-looping worker (${Number.isNaN(f.cycleMs) ? 'one cycle' : `one every ${f.cycleMs} ms`}, ${f.failedStarts} failed starts), ` +
    `healthy workers ${f.healthyActivitiesPerSecond.toFixed(1)} activities/s during the churn; ${moves}`
  );
}

/**
 * How fast the spec enqueues its runs: the 100 runs arrive over 10 s of churn, four or five
 * cycles of the crash loop (a join and a SIGKILL each, about 2.4 s apart), every run read from the
 * run queue while the loop goes on. At the figures' default of 5 a second the churn lasted 20 s
 * and repeated the same cycle ten times over for the same checks.
 */
const SPEC_ENQUEUE_PER_SECOND = 10;

/**
 * The scenario as a spec: every run completes, none lost, no duplicate effect, while a third
 * worker crash-loops beside two healthy ones. The figures are printed, never asserted.
 */
export function describeCrashLoop(
  name: string,
  factory: CrashEnvironmentFactory,
  options: Partial<CrashLoopOptions> = {},
): void {
  describe(`crash loop: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      'finishes every run exactly once in effect while a third worker crash-loops beside two healthy ones',
      { timeout: 150_000 },
      async () => {
        const runs = options.runs ?? 100;
        world = await CrashWorld.create(factory, {
          workerEnv: { BATON_CONCURRENCY: '20', ...options.workerEnv },
        });
        const figures = await crashLoopFigures(world, {
          runs,
          capMs: options.capMs ?? 90_000,
          enqueuePerSecond: SPEC_ENQUEUE_PER_SECOND,
          ...options,
        });
        console.log(formatCrashLoopFigures(name, figures));
        expect(await world.unfinished()).toEqual([]);
        expect(figures.kills).toBeGreaterThan(0);
        expect(await world.violations()).toEqual(NO_VIOLATIONS);
      },
    );
  });
}
