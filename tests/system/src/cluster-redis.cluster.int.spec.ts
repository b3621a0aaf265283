/**
 * The crash workload on a Redis primary, its replica and three sentinels (real processes, the
 * infra/clusters/redis scripts), with workers on the shared NATS bus: the node that holds the
 * data is SIGKILLed mid-run (Sentinel promotes the replica; the old node comes back as a replica),
 * or frozen for 10 s with SIGSTOP and continued. Checked from outside, as in the worker crash
 * suite: every run right, none lost, no duplicate effect, no step run again after its completion
 * was durable, every zombie write fenced.
 *
 * How long store writes stalled, how many runs lived through the failover and what the workers
 * logged are printed, never asserted.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '@baton/core/adapter';
import { startRedisCluster, type RedisCluster } from '@baton/testing/clusters';
import { CrashWorld, type WorkerProcess, NO_VIOLATIONS } from '@baton/testing/crash';
import { redisStore } from '@baton/store-redis';
import { crashEnvironment } from './crash-environment.spec-helper.js';

const RUNS = 60;
const SHAPE = { steps: 10, minDelayMs: 200, maxDelayMs: 600 };

/**
 * Writes a lease for a new key every 100 ms through the same URL and guard as the workers, and
 * keeps the times they were confirmed: the longest gap is how long store writes stalled.
 */
class WriteProbe {
  private readonly confirmed: number[] = [];
  /** Refused writes by error code: BATON_REDIS_NOT_REPLICATED is the guard at work. */
  readonly refused = new Map<string, number>();
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly store: Store) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    for (let i = 0; this.running; i++) {
      try {
        await this.store.leases.acquire(`probe-${i}`, 'probe', 60_000);
        this.confirmed.push(Date.now());
      } catch (err) {
        // Unavailable or not replicated: the stall being measured.
        const code = String((err as { code?: unknown }).code ?? 'other');
        this.refused.set(code, (this.refused.get(code) ?? 0) + 1);
      }
      await sleep(100);
    }
  }

  /** Waits until a write was refused with `code`, or `timeoutMs` passed. */
  async waitForRefusal(code: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((this.refused.get(code) ?? 0) === 0 && Date.now() < deadline) await sleep(100);
  }

  /** Stops probing; returns the longest time between two confirmed writes after `from`. */
  async stop(from: number): Promise<number> {
    this.running = false;
    await this.loop;
    await this.store.close();
    const times = this.confirmed.filter((t) => t >= from - 1_000);
    let longest = 0;
    for (let i = 1; i < times.length; i++) longest = Math.max(longest, times[i]! - times[i - 1]!);
    return longest;
  }
}

let probes = 0;
async function startProbe(world: CrashWorld, url: string): Promise<WriteProbe> {
  // Under the world's key prefix, so disposing of the world removes the probe's keys too; each
  // probe under its own, since the tests share a world and a probe's leases outlive its test.
  const store = redisStore({ url, keyPrefix: `${world.ns}:probe${++probes}:` });
  await store.connect();
  return new WriteProbe(store);
}

/** Runs with an activity started before `at` and one finished after it: in flight at the fault. */
async function runsAcross(world: CrashWorld, at: number): Promise<{ across: number; moved: number }> {
  const executions = await world.ledger.executions();
  const byRun = new Map<string, typeof executions>();
  for (const e of executions) byRun.set(e.runId, [...(byRun.get(e.runId) ?? []), e]);
  let across = 0;
  let moved = 0;
  for (const list of byRun.values()) {
    if (list.some((e) => e.startedAt < at) && list.some((e) => (e.finishedAt ?? 0) > at)) across++;
    if (new Set(list.map((e) => e.pid)).size > 1) moved++;
  }
  return { across, moved };
}

/** The workers' warnings and errors, counted by message. */
function warnings(workers: readonly WorkerProcess[]): string {
  const counts = new Map<string, number>();
  for (const line of workers.flatMap((w) => w.logs.filter((l) => l.level >= 40))) {
    counts.set(line.msg, (counts.get(line.msg) ?? 0) + 1);
  }
  return [...counts].map(([msg, n]) => `${n}x '${msg}'`).join(', ') || 'none';
}

describe('cluster crash: nats + redis behind Sentinel', () => {
  let cluster: RedisCluster | undefined;
  /**
   * One world and fleet of three workers for both fault tests: each enqueues runs of its own into
   * it and checks the invariants over every run the world holds (its own and the first test's).
   */
  let world: CrashWorld | undefined;

  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 120_000);
  afterAll(async () => {
    await world?.dispose();
    await cluster?.stop();
  }, 60_000);

  /** The file's world, started with the first test; afresh after a test that left it broken. */
  async function startWorld(c: RedisCluster): Promise<CrashWorld> {
    const broken =
      world !== undefined &&
      (world.fleet.alive.length < 3 || (await world.unfinished().catch(() => ['?'])).length > 0);
    if (broken) {
      await world!.dispose();
      world = undefined;
    }
    if (world === undefined) {
      world = await CrashWorld.create(crashEnvironment('redis'), {
        overrides: { storeUrl: c.url },
        workerEnv: { BATON_CONCURRENCY: String(RUNS) },
      });
      await Promise.all([world.fleet.spawn(), world.fleet.spawn(), world.fleet.spawn()]);
    }
    return world;
  }

  /** Enqueues this test's runs and waits until `RUNS` activities of them ran, so the fault lands mid-run. */
  async function enqueueAndProgress(w: CrashWorld): Promise<void> {
    const mine = new Set((await w.enqueue(RUNS, SHAPE)).map((r) => r.runId));
    const deadline = Date.now() + 60_000;
    while ((await w.ledger.executions()).filter((e) => mine.has(e.runId)).length < RUNS) {
      if (Date.now() > deadline) throw new Error(`fewer than ${RUNS} activities ran within 60 s`);
      await sleep(100);
    }
  }

  it(
    'loses nothing when the primary is SIGKILLed mid-run, Sentinel promotes the replica and the old node rejoins',
    { timeout: 210_000 },
    async () => {
      const c = cluster!;
      const w = await startWorld(c);
      await enqueueAndProgress(w);
      const probe = await startProbe(w, c.url);
      await sleep(500);

      const primary = await c.primaryNode();
      const killedAt = Date.now();
      await c.kill(primary);
      const promoted = await c.waitForFailover(primary);
      const promotedAt = Date.now();
      // The old primary stays down until the guard refused a write (the promoted node has no
      // replica meanwhile, so guarded writes cannot be confirmed), or 60 s (on a loaded machine the
      // probe's client took over 30 s to find the promoted node); then it comes back as a replica
      // and they resume.
      await probe.waitForRefusal('BATON_REDIS_NOT_REPLICATED', 60_000);
      await c.start(primary);
      const rejoinedAt = Date.now();

      await w.waitForAll(120_000);
      const stalledMs = await probe.stop(killedAt);
      expect(await w.violations()).toEqual(NO_VIOLATIONS);
      expect(await c.primaryNode()).toBe(promoted);
      // While the promoted node had no replica, the guard refused to confirm writes.
      expect(
        probe.refused.get('BATON_REDIS_NOT_REPLICATED') ?? 0,
        `probe refusals ${JSON.stringify([...probe.refused])}, promoted after ${promotedAt - killedAt} ms, ` +
          `old node restarted after ${rejoinedAt - killedAt} ms`,
      ).toBeGreaterThan(0);
      const { across, moved } = await runsAcross(w, killedAt);
      console.log(
        `[cluster redis] SIGKILL primary (node ${primary}): promoted node ${promoted} after ${promotedAt - killedAt} ms, ` +
          `old node back as replica after ${rejoinedAt - killedAt} ms; store writes stalled ${stalledMs} ms ` +
          `(probe refusals: ${[...probe.refused].map(([code, n]) => `${n}x ${code}`).join(', ')}); ` +
          `${across} of ${RUNS} runs were in flight across the failover (${moved} moved to another worker); ` +
          `workers logged: ${warnings(w.fleet.all)}`,
      );
    },
  );

  it(
    'loses nothing when the primary is frozen for 10 s (SIGSTOP) while Sentinel promotes the replica, then continued',
    { timeout: 150_000 },
    async () => {
      const c = cluster!;
      const w = await startWorld(c);
      await enqueueAndProgress(w);
      const probe = await startProbe(w, c.url);
      await sleep(500);

      const primary = await c.primaryNode();
      const frozenAt = Date.now();
      await c.signal(primary, 'SIGSTOP');
      let promoted: 1 | 2;
      try {
        promoted = await c.waitForFailover(primary, 9_000);
      } finally {
        await sleep(Math.max(0, frozenAt + 10_000 - Date.now()));
        await c.signal(primary, 'SIGCONT');
      }
      const promotedAt = Date.now();
      await w.waitForAll(120_000);
      const stalledMs = await probe.stop(frozenAt);
      expect(await w.violations()).toEqual(NO_VIOLATIONS);
      // The continued node was demoted: Sentinel made it a replica of the one it promoted.
      expect(await c.primaryNode()).toBe(promoted);
      const { across, moved } = await runsAcross(w, frozenAt);
      console.log(
        `[cluster redis] SIGSTOP primary (node ${primary}) 10 s: node ${promoted} promoted while frozen; ` +
          `store writes stalled ${stalledMs} ms (probe refusals: ${[...probe.refused].map(([code, n]) => `${n}x ${code}`).join(', ')}); ` +
          `${across} of ${RUNS} runs were in flight across it ` +
          `(${moved} moved to another worker); continued after ${promotedAt - frozenAt} ms; ` +
          `workers logged: ${warnings(w.fleet.all)}`,
      );
    },
  );
});
