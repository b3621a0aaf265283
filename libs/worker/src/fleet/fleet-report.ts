/**
 * The worker's report to the fleet ({@link FleetStore}): who it is, where it runs, the workflow
 * versions it registers, how many runs it holds. Written when the worker starts, on every tick of
 * the lease keeper (one write per worker per tick, never one per run), at once when it starts
 * draining, and forgotten when it has stopped: with a retention, left behind as a handed-off
 * departed worker listing the runs it held when it began to drain ({@link FleetReporter.depart}).
 *
 * Invariants:
 * 1. A report never delays a renewal: the keeper's tick only starts it, and a tick whose previous
 *    report is still in flight sends none.
 * 2. A failed report is logged once per streak of failures (and once more when reports go through
 *    again); it never throws into the worker, and a hung one never holds up its start or stop for
 *    more than a lease.
 * 3. The report's time to live ({@link reportTtlMs}) spans several ticks, so one slow or failed
 *    write does not drop a live worker from the listing, while a killed worker drops out soon.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { AnyWorkflowDefinition } from '@baton/core';
import {
  MAX_REPORTED_RUNS,
  type FleetStore,
  type ReportedEncryption,
  type WorkerReport,
  type WorkflowVersions,
} from '@baton/core/adapter';
import type { Logger } from '../logger.js';

/** Ticks a report outlives its write: a live worker stays listed through two missed writes. */
const TICKS_PER_TTL = 3;

/** A report lives this long: three heartbeats, and never less than one lease. */
export function reportTtlMs(heartbeatMs: number, leaseMs: number): number {
  return Math.max(TICKS_PER_TTL * heartbeatMs, leaseMs);
}

/**
 * The host a worker reports: the pod's name (`POD_NAME`, or `K8S_POD_NAME` as the Helm chart sets
 * it), else `HOSTNAME`, else the OS's host name.
 */
export function reportedHost(env: NodeJS.ProcessEnv = process.env): string {
  const named = [env['POD_NAME'], env['K8S_POD_NAME'], env['HOSTNAME']].find(
    (value) => value !== undefined && value !== '',
  );
  return named ?? hostname();
}

let packageVersion: string | undefined;

/**
 * The version of this package, read once from its package.json (two folders up from `src/fleet`
 * and `dist/fleet` alike);
 * `unknown` when the file cannot be read (an unusual install), which the report then shows.
 */
export function batonVersion(): string {
  if (packageVersion !== undefined) return packageVersion;
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: unknown;
    };
    packageVersion = typeof pkg.version === 'string' && pkg.version !== '' ? pkg.version : 'unknown';
  } catch {
    packageVersion = 'unknown';
  }
  return packageVersion;
}

/** Registered workflows grouped by name, versions ascending. */
export function registeredVersions(workflows: readonly AnyWorkflowDefinition[]): WorkflowVersions[] {
  const byName = new Map<string, Set<number>>();
  for (const wf of workflows) byName.set(wf.name, (byName.get(wf.name) ?? new Set()).add(wf.version));
  return [...byName.keys()]
    .sort()
    .map((name) => ({ name, versions: [...byName.get(name)!].sort((a, b) => a - b) }));
}

/** True when `promise` settled (resolved) within `ms`; false when it is still pending then. */
async function settlesWithin(promise: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([Promise.resolve(promise).then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The run ids a report lists: ascending, the first {@link MAX_REPORTED_RUNS}. */
function reportedRuns(runs: readonly string[]): string[] {
  return [...runs].sort().slice(0, MAX_REPORTED_RUNS);
}

/** What changes between reports, read from the worker at each one. */
export interface FleetReportState {
  runsHeld(): number;
  /** The ids of the runs it holds (the report lists the first {@link MAX_REPORTED_RUNS}). */
  runs(): readonly string[];
  /** Store-clock time of the last renewal round that renewed a lease; null before the first. */
  lastRenewalAt(): number | null;
  draining(): boolean;
}

export class FleetReporter {
  private inFlight: Promise<void> | undefined;
  private failing = false;
  private forgotten = false;
  private readonly fixed: Omit<WorkerReport, 'runsHeld' | 'lastRenewalAt' | 'draining' | 'runs'>;

  constructor(
    private readonly store: FleetStore,
    identity: {
      workerId: string;
      workflows: readonly AnyWorkflowDefinition[];
      concurrency: number;
      startedAt: number;
      /** True when it resumes runs journaled through group records. */
      readsGroupJournal: boolean;
      /** Its encryption (key ids), when it encrypts. */
      encryption?: ReportedEncryption;
    },
    private readonly ttlMs: number,
    private readonly state: FleetReportState,
    private readonly logger: Logger,
    /** How long start and stop wait for a report or a forget to settle. */
    private readonly waitMs: number,
    /** How long the store keeps this worker as departed once it left (0: not at all). */
    private readonly keepDepartedMs = 0,
  ) {
    this.fixed = {
      workerId: identity.workerId,
      host: reportedHost(),
      pid: process.pid,
      batonVersion: batonVersion(),
      workflows: registeredVersions(identity.workflows),
      startedAt: identity.startedAt,
      concurrency: identity.concurrency,
      ...(identity.readsGroupJournal && { readsGroupJournal: true }),
      ...(identity.encryption !== undefined && { encryption: identity.encryption }),
    };
  }

  /** The report as it would be written now. */
  current(): WorkerReport {
    return {
      ...this.fixed,
      runsHeld: this.state.runsHeld(),
      runs: reportedRuns(this.state.runs()),
      lastRenewalAt: this.state.lastRenewalAt(),
      draining: this.state.draining(),
    };
  }

  /** A tick's report: sent unless the previous one is still in flight. Never throws. */
  tick(): void {
    if (this.inFlight === undefined) void this.send();
  }

  /**
   * Sends a report now, after the one in flight if any, and resolves once it settled; nothing once
   * {@link forget} was called. Never throws.
   */
  send(): Promise<void> {
    const previous = this.inFlight;
    const sending = (async () => {
      await previous;
      if (!this.forgotten) await this.write();
    })();
    this.inFlight = sending;
    void sending.finally(() => {
      if (this.inFlight === sending) this.inFlight = undefined;
    });
    return sending;
  }

  /**
   * The first report, at start: resolves once it settled, or after `waitMs` at most (a store that
   * hangs must not hang the start; the report then stays in flight and ticks send none). Never throws.
   */
  async first(): Promise<void> {
    await settlesWithin(this.send(), this.waitMs);
  }

  /**
   * Removes the report (graceful stop), after the report in flight if any (waiting `waitMs` at
   * most for each); no report is sent after it. Never throws. A report still in flight when it
   * gives up may land later: it then expires on its own, like a killed worker's.
   */
  async forget(): Promise<void> {
    await this.leave(() => this.store.forget(this.fixed.workerId));
  }

  /**
   * {@link forget}, leaving a handed-off departed worker behind for the retention (when there is
   * one) whose runs are `heldWhenDraining`: the runs it held when it was told to stop, which it
   * handed off. Never throws.
   */
  async depart(heldWhenDraining: readonly string[]): Promise<void> {
    if (this.keepDepartedMs <= 0) return this.forget();
    const last: WorkerReport = {
      ...this.current(),
      // What it held when told to stop, count and ids alike (it holds none by now).
      runsHeld: heldWhenDraining.length,
      runs: reportedRuns(heldWhenDraining),
      draining: true,
    };
    await this.leave(() => this.store.depart(last, this.keepDepartedMs));
  }

  private async leave(remove: () => Promise<void>): Promise<void> {
    this.forgotten = true;
    try {
      if ((await settlesWithin(this.inFlight, this.waitMs)) && (await settlesWithin(remove(), this.waitMs)))
        return;
      this.logger.warn(
        { waitMs: this.waitMs },
        'forgetting the fleet report did not finish in time; the report expires on its own',
      );
    } catch (err) {
      // Harmless: the report drops out of the listing once its time to live has passed.
      this.logger.warn({ err }, 'forgetting the fleet report failed; the report expires on its own');
    }
  }

  private async write(): Promise<void> {
    try {
      await this.store.report(this.current(), this.ttlMs, this.keepDepartedMs);
      if (this.failing) this.logger.info({}, 'fleet report written again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) {
        this.logger.warn({ err }, 'fleet report failed; the worker carries on and retries every heartbeat');
      }
      this.failing = true;
    }
  }
}
