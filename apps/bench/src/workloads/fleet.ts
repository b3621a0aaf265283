/**
 * Fleet at scale: the background load N real worker processes put on the bus and the store, idle
 * and under a light steady load, and the failover time of a SIGKILLed worker at that size.
 *
 * One world (namespace, ledger, fleet) per adapter pair and size:
 * 1. N workers (apps/worker, the worker's defaults) are started a few at a time;
 * 2. idle window: nothing enqueued, the probes read the store, the bus and the workers at its start
 *    and end (fleet-probes.ts);
 * 3. busy window: the crash suite's chain workflow (steps with recorded effects), kept at
 *    `busyRuns` unfinished runs, topped up every second; read the same way;
 * 4. failover: `kills` times, a worker with an activity in flight is SIGKILLed and the time until
 *    each of its runs starts its next activity on another process is read from the ledger;
 * 5. every run finishes and the crash suite's invariants are checked: numbers of a world that lost
 *    or duplicated work are refused, not reported.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CrashWorld, resumeLatencies, type WorkerProcess } from '@baton/testing/crash';
import type { CrashEnvironmentFactory } from '@baton/testing/crash';
import { TEST_POSTGRES_URL_ENV } from '@baton/testing/servers';
import { refuseBrokenRuns, SteadyLoad } from './crash-load.js';
import { difference, processProbe, type Probe, type Reading, type WindowLoad } from '../fleet-probes.js';
import { percentiles, type Percentiles } from '../types.js';

export interface FleetPairSetup {
  /** `nats+redis`, `nats+postgres`, `kafka+postgres`. */
  pair: string;
  factory: CrashEnvironmentFactory;
  /** Probes of the store and the bus (created by the caller, who knows the servers). */
  storeProbe: Probe;
  busProbe: Probe;
  /** Postgres for the ledger. */
  ledgerUrl: string;
  partitioned: boolean;
}

export interface FleetRunOptions {
  workers: number;
  idleSeconds: number;
  busySeconds: number;
  /** Unfinished runs kept during the busy window. */
  busyRuns: number;
  kills: number;
  /** Workers started at once while the fleet boots. */
  startBatch: number;
  log: (line: string) => void;
}

export interface WindowFigures {
  store: WindowLoad;
  bus: WindowLoad;
  workers: WindowLoad;
}

export interface FleetFigures {
  pair: string;
  workers: number;
  idle: WindowFigures;
  busy: WindowFigures;
  /** Steps completed during the busy window. */
  busySteps: number;
  failoverMs: Percentiles;
}

/** Ten short steps: a light load whose runs are always mid-activity when a worker is killed. */
const SHAPE = { steps: 10, minDelayMs: 100, maxDelayMs: 300 };
/** A worker starting beside 49 others on two cores may take long. */
const READY_TIMEOUT_MS = 180_000;
/** The worlds not yet disposed, for {@link killEveryWorkerNow}. */
const liveWorlds = new Set<CrashWorld>();

/** SIGKILL to every worker this module started and has not stopped yet (process exit). */
export function killEveryWorkerNow(): void {
  for (const world of liveWorlds) world.fleet.killAllNow();
}

export async function measureFleet(setup: FleetPairSetup, opts: FleetRunOptions): Promise<FleetFigures> {
  const world = await createWorld(setup);
  liveWorlds.add(world);
  const workerPids = (): number[] => world.fleet.alive.map((w) => w.pid);
  const workersProbe = processProbe(workerPids);
  const read = (): Promise<[Reading, Reading, Reading]> =>
    Promise.all([setup.storeProbe.read(), setup.busProbe.read(), workersProbe.read()]);
  const windowOf = (a: [Reading, Reading, Reading], b: [Reading, Reading, Reading]): WindowFigures => ({
    store: difference(a[0], b[0]),
    bus: difference(a[1], b[1]),
    workers: difference(a[2], b[2]),
  });
  try {
    const label = `${setup.pair} x${opts.workers}`;
    const bootStarted = Date.now();
    for (let started = 0; started < opts.workers; started += opts.startBatch) {
      const batch = Math.min(opts.startBatch, opts.workers - started);
      await Promise.all(Array.from({ length: batch }, () => world.fleet.spawn({}, READY_TIMEOUT_MS)));
    }
    opts.log(
      `${label}: ${opts.workers} workers ready in ${((Date.now() - bootStarted) / 1000).toFixed(1)} s`,
    );
    // Start-up work (consumer group joins, first reports, JIT) settles before the idle window.
    await sleep(opts.workers > 1 && setup.partitioned ? 10_000 : 5_000);

    const idleStart = await read();
    await sleep(opts.idleSeconds * 1000);
    const idle = windowOf(idleStart, await read());
    opts.log(`${label}: idle window done`);

    const load = new SteadyLoad(world, opts.busyRuns, SHAPE);
    await load.topUp();
    // The load reaches its steady level before the window opens.
    await sleep(3_000);
    const stepsBefore = (await world.ledger.executions()).length;
    const busyStart = await read();
    const busyEnd = Date.now() + opts.busySeconds * 1000;
    while (Date.now() < busyEnd) {
      await sleep(Math.min(1_000, Math.max(0, busyEnd - Date.now())));
      await load.topUp();
    }
    const busy = windowOf(busyStart, await read());
    const busySteps = (await world.ledger.executions()).length - stepsBefore;
    opts.log(`${label}: busy window done (${busySteps} steps)`);

    const interruptions: Array<{ pid: number; at: number }> = [];
    for (let i = 0; i < opts.kills; i++) {
      await load.topUp();
      const victim = await busyVictim(world);
      victim.signal('SIGKILL');
      interruptions.push({ pid: victim.pid, at: victim.signalledAt ?? Date.now() });
      // A replacement keeps the fleet's size, as an orchestrator would; with one worker it is the
      // one that resumes the runs, so that failover includes a process start.
      const replacement = world.fleet.spawn({}, READY_TIMEOUT_MS);
      // Only one worker is missing at a time: the next kill waits for this one's runs to move.
      await Promise.all([replacement, sleep(3_000)]);
    }
    await world.waitForAll(180_000);
    await refuseBrokenRuns(world, label);
    const latencies = resumeLatencies(interruptions, await world.ledger.executions());
    return {
      pair: setup.pair,
      workers: opts.workers,
      idle,
      busy,
      busySteps,
      failoverMs: percentiles(latencies),
    };
  } finally {
    await world.dispose();
    liveWorlds.delete(world);
  }
}

/**
 * The harness keeps its ledger in the Postgres that BATON_TEST_POSTGRES_URL names (read only at
 * creation): the bench's Postgres URL is put there for that moment.
 */
async function createWorld(setup: FleetPairSetup): Promise<CrashWorld> {
  const previous = process.env[TEST_POSTGRES_URL_ENV];
  process.env[TEST_POSTGRES_URL_ENV] = setup.ledgerUrl;
  try {
    // The worker's defaults throughout: the harness's short NATS ack wait is set back to the default.
    return await CrashWorld.create(setup.factory, { workerEnv: { BATON_NATS_ACK_WAIT_MS: '' } });
  } finally {
    if (previous === undefined) delete process.env[TEST_POSTGRES_URL_ENV];
    else process.env[TEST_POSTGRES_URL_ENV] = previous;
  }
}

/** A random live worker with an activity in flight (per the ledger). */
async function busyVictim(world: CrashWorld, timeoutMs = 60_000): Promise<WorkerProcess> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const busy = await world.ledger.busyPids();
    const candidates = world.fleet.alive.filter((w) => w.started && busy.has(w.pid));
    const victim = candidates[Math.floor(Math.random() * candidates.length)];
    if (victim) return victim;
    if (Date.now() > deadline)
      throw new Error(
        `no worker had an activity in flight within ${timeoutMs} ms\n${world.fleet.describe()}`,
      );
    await sleep(100);
  }
}
