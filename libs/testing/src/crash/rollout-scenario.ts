/**
 * A Kubernetes rolling update under load, on real worker processes, a real bus and a real store
 * (issue 21, item 1). Three builds of one workflow (rollout-workflows-v1/-v2/-v3.ts):
 *
 * 1. A fleet of three workers on build v1 (`rollout_order` version 1) carries runs in flight: half
 *    in durable sleeps that end during the rollout, half waiting for a signal.
 * 2. Rollout to v2 (version 1 kept and patched with `ctx.patched`, version 2 added), as the chart's
 *    strategy does it (maxSurge 1, maxUnavailable 0): a new worker starts and is ready, then an old
 *    one goes, three times; the second old one is SIGKILLed (a node lost mid-rollout), the others
 *    get SIGTERM and hand off. Signals are sent and timers fire during it; new runs keep arriving,
 *    at version 1 until the first v2 worker is ready and at version 2 after (the producer deploys
 *    on its own schedule).
 * 3. The operator's drain check decides when version 1 may go: `client.fleet.drained()` (the
 *    deploy gate `baton versions --drained rollout_order@1`: no unfinished run, no dead-lettered
 *    start of version 1; it refuses to go on if version 1 is stranded).
 * 4. Rollout to v3 (version 1 removed), in the same waves, under the same load.
 *
 * Then, from the outside (the store, the dead letters, the workers' logs and a Postgres ledger of
 * effects written by the activities): every run completed with the right output, every step of it
 * executed on a worker whose build registers the run's version, no run lost, no effect applied twice,
 * no NonDeterminismError, and no run waited longer than {@link MAX_WAIT_MS} for a worker with its
 * version. The figures (how long the rollouts took, how long the last version-1 run took to finish
 * after the rollout began, the longest wait of one run) are printed on one line per adapter pair.
 *
 * Each adapter pair calls it from its own spec: `describeRollout('nats+redis', environment)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolve } from 'node:path';
import { Client, isFinishedRun } from '@baton/client';
import type { RunStatus } from '@baton/core/adapter';
import { CrashWorld, type CrashEnvironmentFactory } from './harness.js';
import { percentile } from './invariants.js';
import type { EffectRow, ExecutionRow } from './ledger.js';
import {
  approvalOf,
  RECEIPT_STEP,
  ROLLOUT_SIGNAL,
  ROLLOUT_WORKFLOW,
  rolloutExpectedOutput,
  rolloutStepValue,
  type RolloutInput,
} from './rollout-workflows.js';
import { REPO_ROOT, type WorkerProcess } from './worker-processes.js';

/** A build of the workflow code, and the versions of `rollout_order` it registers. */
export type Build = 'v1' | 'v2' | 'v3';
export const BUILD_VERSIONS: Record<Build, readonly number[]> = { v1: [1], v2: [1, 2], v3: [2] };
const BUILD_MODULE: Record<Build, string> = {
  v1: resolve(REPO_ROOT, 'libs/testing/src/crash/rollout-workflows-v1.ts'),
  v2: resolve(REPO_ROOT, 'libs/testing/src/crash/rollout-workflows-v2.ts'),
  v3: resolve(REPO_ROOT, 'libs/testing/src/crash/rollout-workflows-v3.ts'),
};

/** Replicas of the Deployment (each rollout replaces all three). */
const REPLICAS = 3;
/** The stated bound: no run waits longer than this for a worker with its version (ms). */
export const MAX_WAIT_MS = 30_000;
/** Each step's activity (ms): long enough for a SIGTERM or a SIGKILL to land inside one. */
const STEP_MS = 500;
/** A new run every this many ms while the producer runs. */
const PRODUCER_EVERY_MS = 600;
/** A signal run of the producer is signalled this long after its start (ms). */
const SIGNAL_AFTER_MS = 2_500;
/**
 * Between a pod's removal and its SIGTERM: the chart's preStop sleep (preStopSleepSeconds, 2 s by
 * default), during which the old pod still works and the new one already does.
 */
const PRE_STOP_MS = 2_000;
/** How long the drain check and the final wait may take before the test reports what is stuck. */
const DRAIN_TIMEOUT_MS = 60_000;
const FINAL_TIMEOUT_MS = 60_000;

/** The workers' settings: the chart's drain and shutdown, scaled down to a test's seconds. */
const WORKER_ENV = {
  BATON_LEASE_MS: '2000',
  BATON_HEARTBEAT_MS: '500',
  BATON_DRAIN_TIMEOUT_MS: '2000',
  BATON_SHUTDOWN_TIMEOUT_MS: '6000',
};

interface TrackedRun {
  runId: string;
  version: number;
  input: RolloutInput;
  startedAt: number;
  signalAt?: number;
}

/** What the suite measured, printed for docs/versioning.md ("A rollout, step by step"). */
export interface RolloutFigures {
  runs: number;
  firstRolloutMs: number;
  secondRolloutMs: number;
  /** From the first rollout's start to the last version-1 run's completion (store clock). */
  lastV1FinishedAfterMs: number;
  /** From the end of the first rollout until the drain check said version 1 may go. */
  drainedAfterFirstRolloutMs: number;
  /** Timers due, signals sent and runs started during the first rollout. */
  exercised: Record<string, number>;
  /**
   * Start messages dead-lettered `unknown-workflow` (a start that reached a worker without its
   * version), and runs that never got a run record: the known gap of issue 21, item 2.
   */
  deadLetteredStarts: number;
  lostRuns: number;
  /** Put-backs counted by the workers' /metrics (scraped before each stop and at the end). */
  putBacks: number;
  /** Workers that logged a put-back warning (the first put-back of a version, then once a minute). */
  workersThatPutBack: number;
  /** Runs that never executed a step they were ready for (lost, or stuck): their waits are not in the figures below. */
  runsNeverServed: number;
  /** The longest wait of one run for a worker with its version, over the waits that ended. */
  longestWaitMs: number;
  p99WaitMs: number;
  medianWaitMs: number;
}

export function describeRollout(name: string, factory: CrashEnvironmentFactory): void {
  describe(`rolling update under load: ${name}`, () => {
    let world: CrashWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it(
      'rolls v1 -> v2 -> v3 with maxSurge 1 / maxUnavailable 0, a SIGKILL, signals, timers and new runs: ' +
        'every run completes right on a worker with its version, none lost, no effect twice, no NonDeterminismError, bounded waits',
      { timeout: 300_000 },
      async () => {
        world = await CrashWorld.create(factory, { workerEnv: WORKER_ENV });
        const scenario = new RolloutScenario(world, name);
        try {
          await scenario.play();
        } finally {
          await scenario.stopProducer();
        }
        const { violations, figures } = await scenario.check();
        console.log(`[rollout ${name}] ${JSON.stringify(figures)}`);
        expect(violations).toEqual({
          outcomes: [],
          wrongWorker: [],
          effects: [],
          receipts: [],
          nonDeterminism: [],
          deadLetters: [],
          waits: [],
          scenario: [],
        });
      },
    );
  });
}

class RolloutScenario {
  readonly runs: TrackedRun[] = [];
  private readonly client: Client;
  private readonly builds = new Map<WorkerProcess, Build>();
  private producer: Promise<void> | undefined;
  private producing = false;
  private producerVersion = 1;
  private seed = 0;
  private readonly pendingSignals: TrackedRun[] = [];
  private firstRolloutStart = 0;
  private firstRolloutEnd = 0;
  private firstRolloutMs = 0;
  private secondRolloutMs = 0;
  private drainedAfterFirstRolloutMs = 0;

  constructor(
    private readonly world: CrashWorld,
    private readonly name: string,
  ) {
    this.client = new Client({ transport: world.env.transport, store: world.env.store });
  }

  async play(): Promise<void> {
    // 1. The v1 fleet, with runs in flight: sleeps that end during the rollout, and signal waits.
    await Promise.all(Array.from({ length: REPLICAS }, () => this.spawn('v1')));
    const initial: TrackedRun[] = [];
    for (let i = 0; i < 16; i++) {
      const wait = i % 2 === 0 ? 'sleep' : 'signal';
      initial.push(await this.start(1, wait, 4_000 + i * 400));
    }
    await this.until(
      async () => (await this.statuses(initial)).every((s) => s === 'suspended'),
      30_000,
      'the v1 runs to reach their sleeps and signal waits',
    );
    const signalRuns = initial.filter((r) => r.input.wait === 'signal');
    this.startProducer();

    // 2. Rollout to v2: signals and timers fire during it; the producer switches to version 2 once
    // a v2 worker is ready.
    this.firstRolloutStart = Date.now();
    await this.rollingUpdate('v1', 'v2', {
      onFirstReady: () => {
        this.producerVersion = 2;
      },
      afterWave: async (wave) => {
        const half = Math.ceil(signalRuns.length / 2);
        const batch = wave === 0 ? signalRuns.slice(0, half) : wave === 1 ? signalRuns.slice(half) : [];
        for (const run of batch) await this.signal(run);
      },
    });
    const firstRolloutEnd = Date.now();
    this.firstRolloutEnd = firstRolloutEnd;
    this.firstRolloutMs = firstRolloutEnd - this.firstRolloutStart;

    // 3. The drain check: no version-1 run in flight, read from the fleet's reports and the store.
    await this.until(() => this.versionDrained(1), DRAIN_TIMEOUT_MS, 'version 1 to drain');
    this.drainedAfterFirstRolloutMs = Date.now() - firstRolloutEnd;

    // 4. Rollout to v3 (version 1 removed) while version-2 runs are in flight and arriving.
    const secondStart = Date.now();
    await this.rollingUpdate('v2', 'v3', {});
    this.secondRolloutMs = Date.now() - secondStart;
    // The fleet's reports show version 1 gone (a SIGKILLed worker's report lasts until it expires).
    await this.until(
      async () =>
        (await this.client.fleet.workers()).every((w) =>
          w.workflows.every((f) => f.name !== ROLLOUT_WORKFLOW || f.versions.join() === '2'),
        ),
      15_000,
      'the fleet reports to show only workers on version 2',
    );
    await this.stopProducer();
    for (const run of this.pendingSignals.splice(0)) await this.signal(run);
  }

  /**
   * True when `version` is drained, as the operator's deploy gate asks it
   * (`baton versions --drained rollout_order@<version>`, client.fleet.drained): no unfinished run
   * of it and no dead-lettered start. Throws when work needs it and no live worker registers it.
   */
  private async versionDrained(version: number): Promise<boolean> {
    const drain = await this.client.fleet.drained(ROLLOUT_WORKFLOW, version);
    if (drain.stranded) {
      throw new Error(
        `${ROLLOUT_WORKFLOW}@${version} is stranded: ${drain.unfinished.total} unfinished run(s) ` +
          `(${JSON.stringify(drain.unfinished.byStatus)}) and ${drain.deadLetteredStarts} dead-lettered start(s), ` +
          'and no live worker that is not draining registers it',
      );
    }
    return drain.drained;
  }

  /**
   * The Deployment's rolling update with maxSurge 1 and maxUnavailable 0: a new pod starts and is
   * ready before an old one goes. The second old pod is SIGKILLed (preferably one with an activity
   * in flight); the others get SIGTERM and the next wave waits for their exit, as the controller
   * waits for a terminated pod before it surges again.
   */
  private async rollingUpdate(
    from: Build,
    to: Build,
    hooks: { onFirstReady?: () => void; afterWave?: (wave: number) => Promise<void> },
  ): Promise<void> {
    const old = [...this.builds].filter(([w, b]) => b === from && w.alive).map(([w]) => w);
    for (let wave = 0; wave < old.length; wave++) {
      await this.spawn(to);
      if (wave === 0) hooks.onFirstReady?.();
      const remaining = old.filter((w) => w.alive);
      if (wave === 1) {
        const busy = await this.world.ledger.busyPids();
        const victim = remaining.find((w) => busy.has(w.pid)) ?? remaining[0]!;
        await this.scrapePutBacks(victim);
        victim.signal('SIGKILL');
        await victim.exited;
      } else {
        const leaving = remaining[0]!;
        await sleep(PRE_STOP_MS);
        await this.scrapePutBacks(leaving);
        leaving.signal('SIGTERM');
        await leaving.exited;
      }
      await hooks.afterWave?.(wave);
    }
  }

  /**
   * Reads a live worker's put-back counter (`baton_runs_put_back_total` on its /metrics, all
   * versions) and keeps it: a measure of how often runs reached a worker without their version.
   * The count of a worker after its last scrape is not seen (a SIGTERM's drain, a SIGKILL).
   */
  private async scrapePutBacks(worker: WorkerProcess): Promise<void> {
    const port = worker.logs.find((l) => l.msg === 'worker ready')?.httpPort;
    if (typeof port !== 'number' || !worker.alive) return;
    try {
      const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
        signal: AbortSignal.timeout(2_000),
      });
      const text = await response.text();
      let total = 0;
      for (const line of text.split('\n')) {
        const match = /^baton_runs_put_back_total(?:\{[^}]*\})?\s+(\S+)/.exec(line);
        if (match) total += Number(match[1]);
      }
      this.putBacks.set(worker, total);
    } catch {
      // A worker that does not answer keeps its previous count.
    }
  }

  private readonly putBacks = new Map<WorkerProcess, number>();

  private async spawn(build: Build): Promise<WorkerProcess> {
    const worker = await this.world.fleet.spawn({ BATON_WORKFLOWS: BUILD_MODULE[build] });
    this.builds.set(worker, build);
    return worker;
  }

  private async start(version: number, wait: RolloutInput['wait'], sleepMs: number): Promise<TrackedRun> {
    const input: RolloutInput = { seed: ++this.seed, wait, sleepMs, stepMs: STEP_MS };
    const handle = await this.client.start({ name: ROLLOUT_WORKFLOW, version }, input, {
      idempotencyKey: `${this.world.ns}-${input.seed}`,
    });
    const run: TrackedRun = { runId: handle.runId, version, input, startedAt: Date.now() };
    this.runs.push(run);
    return run;
  }

  private async signal(run: TrackedRun): Promise<void> {
    run.signalAt = Date.now();
    await this.client.signal(run.runId, ROLLOUT_SIGNAL, approvalOf(run.input.seed));
  }

  /** New runs keep arriving: alternately a short sleep and a signal wait, signalled a little later. */
  private startProducer(): void {
    this.producing = true;
    this.producer = (async () => {
      let i = 0;
      while (this.producing) {
        const wait = i++ % 2 === 0 ? 'sleep' : 'signal';
        const run = await this.start(this.producerVersion, wait, 1_500);
        if (wait === 'signal') this.pendingSignals.push(run);
        const due = this.pendingSignals.filter((r) => Date.now() - r.startedAt >= SIGNAL_AFTER_MS);
        for (const r of due) {
          this.pendingSignals.splice(this.pendingSignals.indexOf(r), 1);
          await this.signal(r);
        }
        await sleep(PRODUCER_EVERY_MS);
      }
    })();
  }

  async stopProducer(): Promise<void> {
    this.producing = false;
    await this.producer;
  }

  private async statuses(runs: readonly TrackedRun[]): Promise<Array<RunStatus | undefined>> {
    return Promise.all(runs.map(async (r) => (await this.world.env.store.runs.get(r.runId))?.status));
  }

  private async until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) {
        throw new Error(
          `[${this.name}] timed out after ${timeoutMs} ms waiting for ${what}\n${this.world.fleet.describe()}`,
        );
      }
      await sleep(250);
    }
  }

  /** Waits for every run to finish, or until only lost runs (no record at all) remain, or the timeout. */
  private async settle(deadLettered: () => Promise<Set<string>>): Promise<void> {
    const deadline = Date.now() + FINAL_TIMEOUT_MS;
    for (;;) {
      const statuses = await this.statuses(this.runs);
      const open = this.runs.filter((_, i) => !isFinishedRun(statuses[i]));
      if (open.length === 0 || Date.now() > deadline) return;
      const lost = await deadLettered();
      if (open.every((r) => lost.has(r.runId) && statuses[this.runs.indexOf(r)] === undefined)) return;
      await sleep(500);
    }
  }

  async check(): Promise<{ violations: Record<string, string[]>; figures: RolloutFigures }> {
    for (const worker of this.builds.keys()) await this.scrapePutBacks(worker);
    const letters = async (): Promise<
      Array<{ runId: string | undefined; code: string; reason: string; at: number }>
    > =>
      (await this.world.env.transport.deadLetters.list()).map((d) => ({
        runId: runIdOf(d.data),
        code: d.code,
        reason: d.reason,
        at: d.at,
      }));
    await this.settle(async () => new Set((await letters()).flatMap((l) => (l.runId ? [l.runId] : []))));
    const [executions, effects, deadLetters] = await Promise.all([
      this.world.ledger.executions(),
      this.world.ledger.effects(),
      letters(),
    ]);
    const buildOfPid = new Map([...this.builds].map(([w, b]) => [w.pid, b] as const));
    const nameOfPid = new Map([...this.builds].map(([w, b]) => [w.pid, `${w.name} (build ${b})`] as const));
    const dlqBy = this.deadLetteredBy();

    const outcomes: string[] = [];
    const finishedAt: number[] = [];
    for (const run of this.runs) {
      const record = await this.world.env.store.runs.get(run.runId);
      const expected = rolloutExpectedOutput(run.version, run.input);
      const letter = deadLetters.find((l) => l.runId === run.runId);
      const where = letter
        ? `; dead-lettered ${letter.code} by ${dlqBy.get(run.runId) ?? 'an unknown worker'}: ${letter.reason}`
        : '';
      if (record === null || record === undefined) {
        outcomes.push(`${run.runId} (version ${run.version}): lost, no run record${where}`);
      } else if (record.status !== 'completed') {
        outcomes.push(
          `${run.runId} (version ${run.version}, ${run.input.wait}): status ${record.status} ${JSON.stringify(record.error ?? null)}${where}`,
        );
      } else if (record.result !== expected) {
        outcomes.push(`${run.runId}: result ${JSON.stringify(record.result)}, expected ${expected}`);
      } else if (run.version === 1) {
        finishedAt.push(record.updatedAt);
      }
    }

    const byRun = groupBy(executions, (e) => e.runId);
    const wrongWorker: string[] = [];
    for (const run of this.runs) {
      for (const e of byRun.get(run.runId) ?? []) {
        const build = buildOfPid.get(e.pid);
        if (build === undefined || !BUILD_VERSIONS[build].includes(run.version)) {
          wrongWorker.push(
            `${run.runId} (version ${run.version}) step ${e.step} executed by pid ${e.pid} ${nameOfPid.get(e.pid) ?? 'not a worker of this test'}`,
          );
        }
      }
    }

    return {
      violations: {
        outcomes,
        wrongWorker,
        effects: this.checkEffects(effects),
        receipts: this.checkReceipts(effects, executions, buildOfPid),
        nonDeterminism: this.nonDeterminism(),
        deadLetters: await Promise.all(
          deadLetters.map(async (l) => {
            const record = l.runId === undefined ? undefined : await this.world.env.store.runs.get(l.runId);
            const run = record
              ? `; its run exists (${record.status}), dead-lettered ${l.at - this.firstRolloutStart} ms into the rollout, ` +
                `its steps ran ${this.stepsOf(byRun.get(l.runId!) ?? [], nameOfPid)}; ` +
                `what the workers logged of it: ${this.linesAbout(l.runId!)}`
              : '; no run record';
            return `${l.runId ?? '(no run id)'} ${l.code} by ${dlqBy.get(l.runId ?? '') ?? '?'}: ${l.reason}${run}`;
          }),
        ),
        waits: this.waits(byRun).violations,
        scenario: this.exercised(byRun),
      },
      figures: {
        runs: this.runs.length,
        firstRolloutMs: this.firstRolloutMs,
        secondRolloutMs: this.secondRolloutMs,
        lastV1FinishedAfterMs: Math.max(...finishedAt) - this.firstRolloutStart,
        drainedAfterFirstRolloutMs: this.drainedAfterFirstRolloutMs,
        exercised: this.exercisedCounts,
        deadLetteredStarts: deadLetters.filter((l) => l.code === 'unknown-workflow').length,
        lostRuns: outcomes.filter((o) => o.includes(': lost,')).length,
        putBacks: [...this.putBacks.values()].reduce((a, b) => a + b, 0),
        workersThatPutBack: [...this.builds.keys()].filter((w) =>
          w.logs.some((l) => l.msg.includes('which this worker does not register')),
        ).length,
        ...this.waits(byRun).figures,
      },
    };
  }

  /**
   * What the rollout must have gone through, or it proved less than it claims: timers that came
   * due and signals sent while the first rollout was under way, and runs started during it.
   */
  private exercised(byRun: ReadonlyMap<string, ExecutionRow[]>): string[] {
    const during = (at: number | undefined): boolean =>
      at !== undefined && at >= this.firstRolloutStart && at <= this.firstRolloutEnd;
    const timers = this.runs.filter((r) => {
      const done = (byRun.get(r.runId) ?? []).find((e) => e.step === 0 && e.finishedAt !== null);
      return (
        r.input.wait === 'sleep' && done?.finishedAt != null && during(done.finishedAt + r.input.sleepMs)
      );
    }).length;
    const signals = this.runs.filter((r) => during(r.signalAt)).length;
    const starts = this.runs.filter((r) => during(r.startedAt)).length;
    this.exercisedCounts = {
      timersDueDuringRollout: timers,
      signalsDuringRollout: signals,
      startsDuringRollout: starts,
    };
    return Object.entries(this.exercisedCounts)
      .filter(([, n]) => n === 0)
      .map(([what]) => `${what} is 0: the first rollout did not exercise it`);
  }

  private exercisedCounts: Record<string, number> = {};

  /** Steps 0 and 1 of every run: exactly one effect each (by idempotency key), with the right value. */
  private checkEffects(effects: readonly EffectRow[]): string[] {
    const byRunStep = groupBy(effects, (e) => `${e.runId}#${e.step}`);
    const violations: string[] = [];
    for (const run of this.runs) {
      const { seed } = run.input;
      const first = rolloutStepValue(0, 0, seed, run.version);
      const between = run.input.wait === 'signal' ? approvalOf(seed) : 0;
      const values = [first, rolloutStepValue(first + between, 1, seed, run.version)];
      values.forEach((value, step) => {
        const found = byRunStep.get(`${run.runId}#${step}`) ?? [];
        if (found.length !== 1) violations.push(`${run.runId} step ${step}: ${found.length} effects`);
        else if (found[0]!.value !== value)
          violations.push(`${run.runId} step ${step}: value ${found[0]!.value}, expected ${value}`);
      });
    }
    return violations;
  }

  /**
   * The patch: a receipt at most once per run, only for version 1, only from a v2 build; and some
   * version-1 run did reach the patched code (else the patch was never exercised).
   */
  private checkReceipts(
    effects: readonly EffectRow[],
    executions: readonly ExecutionRow[],
    buildOfPid: ReadonlyMap<number, Build>,
  ): string[] {
    const violations: string[] = [];
    const receipts = groupBy(
      effects.filter((e) => e.step === RECEIPT_STEP),
      (e) => e.runId,
    );
    for (const run of this.runs) {
      const found = receipts.get(run.runId) ?? [];
      if (found.length > 1) violations.push(`${run.runId}: ${found.length} receipts`);
      if (found.length > 0 && run.version !== 1)
        violations.push(`${run.runId}: a receipt on version ${run.version}`);
    }
    for (const e of executions.filter((x) => x.step === RECEIPT_STEP)) {
      if (buildOfPid.get(e.pid) !== 'v2')
        violations.push(`${e.runId}: receipt executed by pid ${e.pid}, not a v2 build`);
    }
    if (receipts.size === 0) violations.push('no version-1 run took the patched branch');
    return violations;
  }

  /** NonDeterminismErrors anywhere: a worker's log or stderr, or a failed run's error. */
  private nonDeterminism(): string[] {
    const found: string[] = [];
    for (const worker of this.builds.keys()) {
      for (const line of [...worker.logs.map((l) => JSON.stringify(l)), ...worker.stderr]) {
        if (/non-?determinism/i.test(line)) found.push(`${worker.name}: ${line.slice(0, 400)}`);
      }
    }
    return found;
  }

  /** Where and when (ms into the first rollout) each step of a run started. */
  private stepsOf(rows: readonly ExecutionRow[], nameOfPid: ReadonlyMap<number, string>): string {
    return rows
      .map(
        (e) =>
          `step ${e.step} on ${nameOfPid.get(e.pid) ?? `pid ${e.pid}`} at ${e.startedAt - this.firstRolloutStart} ms`,
      )
      .join(', ');
  }

  /** The workers' log lines about one run, in order per worker, for a violation's message. */
  private linesAbout(runId: string): string {
    const lines = [...this.builds].flatMap(([worker, build]) =>
      worker.logs
        .filter((l) => l.runId === runId)
        .map(
          (l) => `${worker.name} (build ${build}): ${l.msg}${typeof l.type === 'string' ? ` ${l.type}` : ''}`,
        ),
    );
    return lines.length === 0 ? 'nothing' : lines.slice(0, 12).join(' | ');
  }

  /** Which worker dead-lettered each run, from the workers' logs ('message dead-lettered'). */
  private deadLetteredBy(): Map<string, string> {
    const by = new Map<string, string>();
    for (const [worker, build] of this.builds) {
      for (const line of worker.logs) {
        if (line.msg === 'message dead-lettered' && typeof line.runId === 'string') {
          by.set(
            line.runId,
            `${worker.name} (build ${build}, registers ${ROLLOUT_WORKFLOW}@${BUILD_VERSIONS[build].join(',')})`,
          );
        }
      }
    }
    return by;
  }

  /**
   * Each run's waits for a worker with its version: from its start to its first step, and from
   * the moment it could go on (its timer due, its signal sent) to its second step. Measured on the
   * ledger's execution times (this host's clock, as the test's).
   */
  private waits(byRun: ReadonlyMap<string, ExecutionRow[]>): {
    violations: string[];
    figures: Pick<RolloutFigures, 'runsNeverServed' | 'longestWaitMs' | 'p99WaitMs' | 'medianWaitMs'>;
  } {
    const all: number[] = [];
    const unserved = new Set<string>();
    const violations: string[] = [];
    for (const run of this.runs) {
      const rows = byRun.get(run.runId) ?? [];
      const first = rows.find((e) => e.step === 0);
      const firstDone = rows.filter((e) => e.step === 0 && e.finishedAt !== null).at(-1)?.finishedAt;
      const second = rows.find((e) => e.step === 1);
      const waits: Array<[string, number]> = [];
      waits.push(['start to step 0', (first?.startedAt ?? Infinity) - run.startedAt]);
      if (firstDone !== undefined && firstDone !== null) {
        const ready =
          run.input.wait === 'sleep'
            ? firstDone + run.input.sleepMs
            : Math.max(firstDone, run.signalAt ?? Infinity);
        if (Number.isFinite(ready))
          waits.push([`${run.input.wait} to step 1`, (second?.startedAt ?? Infinity) - ready]);
      }
      for (const [what, ms] of waits) {
        if (Number.isFinite(ms)) all.push(Math.max(0, ms));
        else unserved.add(run.runId);
        if (!(ms <= MAX_WAIT_MS)) {
          violations.push(
            `${run.runId} (version ${run.version}) waited ${ms} ms (${what}), bound ${MAX_WAIT_MS} ms`,
          );
        }
      }
    }
    all.sort((a, b) => a - b);
    return {
      violations,
      figures: {
        runsNeverServed: unserved.size,
        longestWaitMs: all.at(-1) ?? NaN,
        p99WaitMs: percentile(all, 99),
        medianWaitMs: percentile(all, 50),
      },
    };
  }
}

/** The run id in a run-queue message's data (JSON), if it has one. */
function runIdOf(data: Uint8Array): string | undefined {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(data)) as { runId?: unknown };
    return typeof parsed.runId === 'string' ? parsed.runId : undefined;
  } catch {
    return undefined;
  }
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  return groups;
}
