/**
 * One crash-test world: a namespace on the bus and the store, a ledger, a fleet of real worker
 * processes, a producer, and the checks at the end. Scenarios (crash-suite.ts) drive it.
 */
import { supportsGroupJournal, withGroupJournal } from '@baton/core/runtime';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { Client, isFinishedRun, type RunPriority } from '@baton/client';
import { BatonError } from '@baton/core';
import type { Store, Transport } from '@baton/core/adapter';
import { filterFencedEntries, type PositionedEntry } from '@baton/core/runtime';
import { postgresTestUrl } from '../servers.js';
import { crashChain, type ChainInput } from './crash-workflow.js';
import {
  checkEffects,
  checkFencing,
  checkNoReexecution,
  checkOutcomes,
  readJournal,
  type StartedRun,
} from './invariants.js';
import { Ledger, LEDGER_SCHEMA_ENV, LEDGER_URL_ENV, type ExecutionRow } from './ledger.js';
import { CRASH_WORKFLOW_MODULE, WorkerFleet, type WorkerProcess } from './worker-processes.js';

/** What an adapter pair provides for one namespace. */
export interface CrashEnvironment {
  /** Environment variables that point a worker process at this namespace's bus and store. */
  workerEnv: Record<string, string>;
  /** The same bus and store for the test process (producer and checks); connected by the harness. */
  transport: Transport;
  store: Store;
  /** Removes the namespace's data (streams, keys, schema). */
  dispose(): Promise<void>;
}

/** Server URLs a scenario overrides (a private server it restarts). */
export interface ServerOverrides {
  transportUrl?: string;
  storeUrl?: string;
}

/** Builds the environment for namespace `ns` (lowercase letters and digits). */
export type CrashEnvironmentFactory = (ns: string, overrides: ServerOverrides) => Promise<CrashEnvironment>;

export interface WorldOptions {
  overrides?: ServerOverrides;
  /** Extra environment for every worker process. */
  workerEnv?: Record<string, string>;
}

/** What {@link CrashWorld.violations} returns for a clean run: every invariant held. */
export const NO_VIOLATIONS = {
  outcomes: [],
  effects: [],
  reexecutedAfterCompletion: [],
  fencing: [],
  deadLetters: [],
} as const;

/** Polls `check` every 50 ms until it holds; fails naming `what()` after `timeoutMs`. */
export async function pollUntil(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await sleep(50);
  }
}

/** The run-queue partitions `worker` last logged as its own (Kafka), or undefined before any. */
export function latestPartitions(worker: WorkerProcess): number[] | undefined {
  const line = worker.logs.findLast(
    (l) => l.msg === 'kafka run-queue partitions assigned' || l.msg === 'kafka run-queue partitions owned',
  );
  return Array.isArray(line?.partitions) ? (line.partitions as number[]) : undefined;
}

export class CrashWorld {
  readonly runs: StartedRun[] = [];
  private readonly client: Client;

  private constructor(
    readonly ns: string,
    readonly env: CrashEnvironment,
    readonly ledger: Ledger,
    readonly fleet: WorkerFleet,
  ) {
    this.client = new Client({ transport: env.transport, store: env.store });
  }

  static async create(factory: CrashEnvironmentFactory, options: WorldOptions = {}): Promise<CrashWorld> {
    const ns = `c${randomBytes(5).toString('hex')}`;
    const ledgerSchema = `ledger_${ns}`;
    const ledger = new Ledger(postgresTestUrl(), ledgerSchema);
    await ledger.create();
    const made = await factory(ns, options.overrides ?? {});
    // The checks read every run's journal, grouped runs' through their pointers (group commit).
    const env = supportsGroupJournal(made.transport, made.store)
      ? {
          ...made,
          transport: withGroupJournal(made.transport, made.store, { mode: 'per-run', log: 'checker' }),
        }
      : made;
    await env.transport.connect();
    await env.store.connect();
    const fleet = new WorkerFleet({
      ...env.workerEnv,
      BATON_WORKFLOWS: CRASH_WORKFLOW_MODULE,
      [LEDGER_URL_ENV]: postgresTestUrl(),
      [LEDGER_SCHEMA_ENV]: ledgerSchema,
      // A killed worker's fetched-but-unclaimed messages come back after this.
      BATON_NATS_ACK_WAIT_MS: '5000',
      BATON_REDIS_BUS_ACK_WAIT_MS: '5000',
      ...options.workerEnv,
    });
    return new CrashWorld(ns, env, ledger, fleet);
  }

  /** Enqueues `count` chain runs through the bus, as a producer would, at `priority` if given. */
  async enqueue(
    count: number,
    shape: Omit<ChainInput, 'seed'>,
    priority?: RunPriority,
  ): Promise<StartedRun[]> {
    const started: StartedRun[] = [];
    for (let i = 0; i < count; i++) {
      const input: ChainInput = { ...shape, seed: this.runs.length + 1 };
      const handle = await this.client.start(crashChain, input, {
        idempotencyKey: `${this.ns}-${input.seed}`,
        ...(priority !== undefined && { priority }),
      });
      started.push({ runId: handle.runId, input });
      this.runs.push({ runId: handle.runId, input });
    }
    return started;
  }

  /**
   * SIGKILLs a live worker with a step in flight (the first found within 30 s), waits for it to
   * exit and starts a replacement; returns the killed pid and when it was killed.
   */
  async killBusyWorker(): Promise<{ pid: number; at: number }> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const open = (await this.ledger.executions()).filter((e) => e.finishedAt === null);
      const victim = this.fleet.alive.find((p) => open.some((e) => e.pid === p.pid));
      if (victim !== undefined) {
        victim.signal('SIGKILL');
        const at = Date.now();
        await victim.exited;
        await this.fleet.spawn();
        return { pid: victim.pid, at };
      }
      if (Date.now() > deadline) throw new Error(`no step in flight\n${this.fleet.describe()}`);
      await sleep(50);
    }
  }

  /** Runs not yet finished in the store (completed, failed or cancelled). */
  async unfinished(): Promise<string[]> {
    const open: string[] = [];
    for (const { runId } of this.runs) {
      const record = await this.env.store.runs.get(runId);
      if (!record || !isFinishedRun(record.status)) open.push(runId);
    }
    return open;
  }

  /** Waits until every run finished; throws naming the stuck runs after `timeoutMs`. */
  async waitForAll(timeoutMs: number, whileWaiting?: () => Promise<void>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // A store that answers "unavailable, retry" (a server failing over under the test) means
      // "cannot tell yet": ask again at the next poll, until the deadline.
      const open = await this.unfinished().catch((error: unknown) => {
        if (error instanceof BatonError && error.retryable && Date.now() <= deadline) return undefined;
        throw error;
      });
      if (open === undefined) {
        await sleep(250);
        continue;
      }
      if (open.length === 0) return;
      if (Date.now() > deadline) {
        throw new Error(
          `${open.length} runs did not finish within ${timeoutMs} ms: ${open.slice(0, 10).join(', ')}\n${this.fleet.describe()}`,
        );
      }
      await (whileWaiting?.() ?? sleep(250));
    }
  }

  /**
   * Waits until each of `workers` reads some of the run queue's partitions and together they read
   * all of them, from their logs: on a partitioned bus (Kafka, BATON_KAFKA_PARTITIONS set) the first
   * member to join would otherwise claim every run before the others hold a partition. Returns at
   * once on a bus without partitions, where every worker fetches from the one queue as soon as it is
   * ready. It waits for the event rather than a fixed time, but at most `timeoutMs`: the scenarios
   * only want their runs spread (as their fixed two seconds did), and go on as before when a member
   * is slow to take partitions (seen once under heavy load: a ready worker held none after 30 s);
   * it returns whether they were spread, and prints when they were not.
   */
  async untilPartitionsSpread(workers: readonly WorkerProcess[], timeoutMs = 10_000): Promise<boolean> {
    const count = Number(this.fleet.env.BATON_KAFKA_PARTITIONS ?? 0);
    if (count === 0) return true;
    const spread = (): boolean => {
      const held = workers.map(latestPartitions);
      return held.every((p) => p !== undefined && p.length > 0) && new Set(held.flat()).size >= count;
    };
    const deadline = Date.now() + timeoutMs;
    while (!spread()) {
      if (Date.now() > deadline) {
        const held = workers.map((w) => `pid ${w.pid}: [${(latestPartitions(w) ?? []).join(',')}]`);
        console.log(
          `[crash] the run queue's ${count} partitions not spread after ${timeoutMs} ms (${held.join('; ')}): going on`,
        );
        return false;
      }
      await sleep(50);
    }
    return true;
  }

  /** Waits until some process has an activity of this world in flight; returns those executions. */
  async waitForExecutions(pid: number, atLeast = 1, timeoutMs = 30_000): Promise<ExecutionRow[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const mine = (await this.ledger.executions()).filter((e) => e.pid === pid);
      if (mine.length >= atLeast) return mine;
      if (Date.now() > deadline) throw new Error(`pid ${pid} executed nothing within ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  async journals(): Promise<Map<string, PositionedEntry[]>> {
    // One run after another, unlike the checks' store reads (mapLimited): with eight at once, a
    // read through the group journal on the NATS cluster once found a group record gone
    // (GroupRecordMissingError, after the run queue leader's SIGKILL and restart); until that is
    // understood, the journals are read as they were.
    const journals = new Map<string, PositionedEntry[]>();
    for (const { runId } of this.runs) journals.set(runId, await readJournal(this.env.transport, runId));
    return journals;
  }

  /** Every invariant, as a list of violations per invariant (all empty when the run was clean). */
  async violations(): Promise<Record<string, string[]>> {
    const [executions, effects, journals, deadLetters] = await Promise.all([
      this.ledger.executions(),
      this.ledger.effects(),
      this.journals(),
      this.env.transport.deadLetters.list(),
    ]);
    return {
      outcomes: await checkOutcomes(this.env.store, this.runs),
      effects: checkEffects(this.runs, effects),
      // What replay uses: a zombie's late append, possible on a bus without conditional appends,
      // is ignored there, so a step may legitimately run again after it.
      reexecutedAfterCompletion: checkNoReexecution(effectiveJournals(journals), executions),
      fencing: await checkFencing(this.env.store, journals, {
        busEnforces: this.env.transport.journal.supportsOptimisticAppend,
      }),
      deadLetters: deadLetters.map((d) => `${d.code}: ${d.reason}`),
    };
  }

  /** Stops every worker and removes the namespace and the ledger. */
  async dispose(): Promise<void> {
    await this.fleet.shutdown();
    await Promise.allSettled([this.env.transport.close(), this.env.store.close()]);
    await this.env.dispose().catch(() => undefined);
    await this.ledger.drop().catch(() => undefined);
    await this.ledger.close();
  }
}

function effectiveJournals(journals: ReadonlyMap<string, PositionedEntry[]>): Map<string, PositionedEntry[]> {
  return new Map([...journals].map(([runId, entries]) => [runId, filterFencedEntries(entries)]));
}
