/**
 * Pause on real worker processes, a real bus and a real store. A run asked to pause while its slow
 * activity is in flight stops once that activity's result is journaled. And a paused run survives
 * the SIGKILL of its owner and stays paused: the owner is SIGKILLed before that activity ends. No worker, reaper or dead-worker scan may run it again
 * (checked until each of them had its chance, at least a lease period and a bus redelivery:
 * {@link watchUntil}); resumed, it completes on another worker, and the ledger
 * (the outside world's record of effects) shows no step applied twice.
 *
 * Each adapter pair calls it from its own spec: `describePauseCrash('nats+redis', environment)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@baton/client';
import { CrashWorld, type CrashEnvironmentFactory, NO_VIOLATIONS, latestPartitions } from './harness.js';
import { readJournal } from './invariants.js';

/** Lease of the scenario's workers: short, so "several lease periods" is a few seconds. */
const LEASE_MS = 2_000;
/** The workers' reaper period (the default would be min(1 s, lease / 2)): more scans per watch. */
const REAP_MS = 500;
/** The harness's BATON_NATS_ACK_WAIT_MS / BATON_REDIS_BUS_ACK_WAIT_MS: an unacked message comes back after it. */
const ACK_WAIT_MS = 5_000;
/**
 * The first step takes this long, so the pause request and the kill, sent as soon as that step is
 * seen started, surely land inside it. The two steps after it take {@link LATER_STEP_MS}: nothing
 * has to land inside them, and they only have to run, once each, after the resume.
 */
const STEP_MS = 2_500;
const LATER_STEP_MS = 300;
const SHAPE = {
  steps: 3,
  minDelayMs: STEP_MS,
  maxDelayMs: STEP_MS + 1,
  delaysMs: [STEP_MS, LATER_STEP_MS, LATER_STEP_MS],
};

/**
 * How long a paused run is watched, and why that is long enough for a broken pause to show: not a
 * fixed number of leases, but until every way the run could be taken up again has had its chance,
 * each bounded by the workers' settings, plus two reaper periods of margin:
 * - its owner going on to the next step: at once (test 1);
 * - the reaper finding a lease left to expire: the last heartbeat came before the pause, so the
 *   lease would expire by `pausedAt + LEASE_MS`, and a scan runs every REAP_MS (jittered to 1.25x);
 * - the bus handing the run's message out again: on NATS and the Redis bus, ACK_WAIT_MS after it
 *   was delivered, and every message of the run (its start, the pause request) was sent by
 *   `sentBy`; in test 2 also ACK_WAIT_MS after the kill (what the dead owner held unacked); on Kafka, once the dead
 *   member's partitions moved (its session timeout, or its presence dropping): test 2 waits for the
 *   survivor to log them as its own, an event, before the window ends.
 * Every one of these bounds is at least a lease period after the pause, and the window covers the
 * latest of them, so a pause that let any of them resume the run fails the checks after it.
 */
function watchUntil(pausedAt: number, sentBy: number): number {
  const margin = 2 * REAP_MS;
  return Math.max(pausedAt + LEASE_MS + margin, sentBy + ACK_WAIT_MS + margin);
}

/** Sleeps until the local time `at`. */
async function sleepUntil(at: number): Promise<void> {
  await sleep(Math.max(0, at - Date.now()));
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

export interface PauseCrashOptions {
  /**
   * Runs this pair's two tests (still one after the other) beside the other pairs of the file that
   * pass it too. Each pair has its own namespace, ledger and workers, and the scenario keeps the
   * machine nearly idle (one run, one or two workers mostly waiting), so the pairs do not stretch
   * each other's timings; most of the scenario is waiting for a 2.5 s step and the watch window.
   * @defaultValue false
   */
  besideOtherPairs?: boolean;
}

export function describePauseCrash(
  name: string,
  factory: CrashEnvironmentFactory,
  options: PauseCrashOptions = {},
): void {
  describe(`pause on worker processes: ${name}`, { concurrent: options.besideOtherPairs === true }, () => {
    let world: CrashWorld | undefined;
    let client: Client | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
      client = undefined;
    });

    it(
      'pauses a run mid-activity after that activity is journaled, starts no further step, and completes on resume',
      { timeout: 180_000, concurrent: false },
      async () => {
        world = await CrashWorld.create(factory, {
          workerEnv: {
            BATON_LEASE_MS: String(LEASE_MS),
            BATON_HEARTBEAT_MS: '500',
            BATON_REAP_INTERVAL_MS: String(REAP_MS),
          },
        });
        const w = world;
        client = new Client({ transport: w.env.transport, store: w.env.store });
        await w.fleet.spawn();
        const [started] = await w.enqueue(1, SHAPE);
        const runId = started!.runId;
        await until(async () => (await w.ledger.busyPids()).size > 0, 30_000, 'the first step to start');

        expect(await client.runs.pause(runId)).toBe('pause-requested');
        const sentBy = Date.now();
        await until(
          async () => (await w.env.store.runs.get(runId))?.status === 'paused',
          30_000,
          `run ${runId} to pause\n${w.fleet.describe()}`,
        );
        const pausedAt = Date.now();
        // The step in flight finished and is journaled; the next one never started.
        const atPause = await w.ledger.executions();
        expect(atPause.map((e) => [e.step, e.finishedAt !== null])).toEqual([[0, true]]);
        const journal = (await readJournal(w.env.transport, runId)).map((p) => p.entry);
        expect(journal).toContainEqual(expect.objectContaining({ type: 'ActivityCompleted', seq: 0 }));
        expect(journal.some((e) => e.type === 'ActivityStarted' && e.seq === 1)).toBe(false);
        expect(w.fleet.all[0]!.logs.some((l) => l.msg === 'run paused')).toBe(true);
        await sleepUntil(watchUntil(pausedAt, sentBy));
        expect((await w.env.store.runs.get(runId))?.status).toBe('paused');
        expect((await w.ledger.executions()).length).toBe(1);

        expect(await client.runs.resume(runId)).toBe(true);
        await w.waitForAll(90_000);
        expect(await w.violations()).toEqual(NO_VIOLATIONS);
        // Every step ran exactly once: the pause cost no re-execution.
        expect((await w.ledger.executions()).map((e) => e.step)).toEqual([0, 1, 2]);
      },
    );

    it(
      'keeps a run paused after its owner is SIGKILLed mid-activity; resumed, it completes elsewhere with no effect twice',
      { timeout: 180_000, concurrent: false },
      async () => {
        world = await CrashWorld.create(factory, {
          workerEnv: {
            BATON_LEASE_MS: String(LEASE_MS),
            BATON_HEARTBEAT_MS: '500',
            BATON_REAP_INTERVAL_MS: String(REAP_MS),
          },
        });
        const w = world;
        client = new Client({ transport: w.env.transport, store: w.env.store });
        const workers = await Promise.all([w.fleet.spawn(), w.fleet.spawn()]);
        const [started] = await w.enqueue(1, SHAPE);
        const runId = started!.runId;

        // Whichever worker took the run has its first step in flight.
        await until(async () => (await w.ledger.busyPids()).size > 0, 30_000, 'the first step to start');
        const [busyPid] = [...(await w.ledger.busyPids())];
        const owner = workers.find((p) => p.pid === busyPid);
        if (owner === undefined) throw new Error(`no worker of this test has pid ${busyPid}`);
        const survivor = workers.find((p) => p !== owner)!;
        const partitions = w.fleet.env.BATON_KAFKA_PARTITIONS;
        const kafkaPartitions = partitions === undefined ? undefined : Number(partitions);

        expect(await client.runs.pause(runId, 'crash-suite pause')).toBe('pause-requested');
        const sentBy = Date.now();
        owner.signal('SIGKILL');
        const killedAt = owner.signalledAt ?? Date.now();
        await owner.exited;
        const inFlightAtKill = (await w.ledger.executions()).filter((e) => e.finishedAt === null);
        expect(inFlightAtKill.map((e) => e.step)).toEqual([0]);

        // The survivor reaps the dead owner's lease; the claim that follows pauses the run.
        await until(
          async () => (await w.env.store.runs.get(runId))?.status === 'paused',
          30_000,
          `run ${runId} to pause after its owner died\n${w.fleet.describe()}`,
        );
        const pausedAt = Date.now();
        const executionsWhenPaused = (await w.ledger.executions()).length;
        // A partitioned bus hands the dead owner's messages out again only once its partitions
        // moved: the window below ends after the survivor holds every one of them. Waited for at
        // most 10 s; should they not move by then (a member slow to take partitions under heavy
        // load), the window is at least the three lease periods it always was, and says so.
        let partitionsMoved = true;
        if (kafkaPartitions !== undefined) {
          const deadline = Date.now() + 10_000;
          while (new Set(latestPartitions(survivor)).size < kafkaPartitions && Date.now() < deadline)
            await sleep(50);
          partitionsMoved = new Set(latestPartitions(survivor)).size >= kafkaPartitions;
          if (!partitionsMoved)
            console.log(
              `[pause] ${name}: the survivor did not log every partition within 10 s; watching 3 leases`,
            );
        }
        await sleepUntil(
          Math.max(
            watchUntil(pausedAt, sentBy),
            killedAt + ACK_WAIT_MS + 2 * REAP_MS,
            partitionsMoved ? 0 : pausedAt + 3 * LEASE_MS,
          ),
        );
        const described = await client.describe(runId);
        expect(described.status).toBe('paused');
        expect(described.lease).toMatchObject({
          state: 'paused',
          owner: null,
          pauseReason: 'crash-suite pause',
        });
        expect((await w.ledger.executions()).length).toBe(executionsWhenPaused);
        expect(survivor.logs.some((l) => l.msg === 'reaped leases')).toBe(true);

        expect(await client.runs.resume(runId)).toBe(true);
        await w.waitForAll(90_000);
        expect(await w.violations()).toEqual(NO_VIOLATIONS);
        const executions = await w.ledger.executions();
        // Step 0 started twice (killed, then after the resume), applied once; the others ran once.
        expect(executions.filter((e) => e.step === 0).length).toBe(2);
        expect(executions.filter((e) => e.step > 0 && e.pid !== survivor.pid)).toEqual([]);
        expect(executions.filter((e) => e.step > 0).length).toBe(2);
      },
    );
  });
}
