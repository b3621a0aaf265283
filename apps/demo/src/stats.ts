/**
 * Collects what the workers report (their `onEvent` callbacks and warnings) for the progress
 * display and the summary. These are the workers' own claims: the summary uses them to tell the
 * story (who resumed what), never to decide whether an invariant held.
 */
import type { Logger, WorkerEvent } from '@baton/worker';

/** Counters of one worker. */
export interface WorkerCounters {
  claimed: number;
  completed: number;
  suspended: number;
  handedOff: number;
  aborted: number;
  /** Leases it gave up because no renewal was confirmed in time (only a cut-off worker should). */
  leasesLost: number;
}

/** A run claimed from a `resume` message after the reaper found its lease expired. */
export interface ReapedClaim {
  runId: string;
  workerId: string;
  /** Time from the reaper finding the lease expired to the new owner claiming the run. */
  latencyMs: number | undefined;
}

const MAX_WARNINGS = 20;

/** Event sink shared by the whole fleet. */
export class FleetStats {
  readonly workers = new Map<string, WorkerCounters>();
  /** Runs suspended right now (waiting for their review signal). */
  readonly suspendedNow = new Set<string>();
  /** Runs resumed because a crashed worker's lease expired, by run id. */
  readonly reapedClaims = new Map<string, ReapedClaim>();
  /** Runs the reapers found with an expired lease. */
  readonly reapedRuns = new Set<string>();
  /** Runs woken by their signal and claimed again. */
  wakeClaims = 0;
  deadLettered = 0;
  readonly failures: string[] = [];
  /** The first few warnings the workers logged, for diagnosing a failed invariant. */
  readonly warnings: string[] = [];
  private warningCount = 0;

  /** Registers a worker so it shows up before its first event. */
  register(workerId: string): void {
    this.workers.set(workerId, {
      claimed: 0,
      completed: 0,
      suspended: 0,
      handedOff: 0,
      aborted: 0,
      leasesLost: 0,
    });
  }

  /** The `onEvent` callback for one worker. Never throws, as the worker requires. */
  observer(workerId: string): (event: WorkerEvent) => void {
    return (event) => {
      try {
        this.observe(workerId, event);
      } catch {
        // A display bug must not disturb the worker.
      }
    };
  }

  /** A logger for one worker that keeps its warnings and errors. */
  logger(workerId: string): Logger {
    const keep = (level: string) => (obj: object, msg?: string) => {
      this.warningCount++;
      if (this.warnings.length >= MAX_WARNINGS) return;
      const err = (obj as { err?: unknown }).err;
      const detail = err instanceof Error ? `: ${err.message}` : '';
      this.warnings.push(`${workerId} ${level}: ${msg ?? ''}${detail}`);
    };
    const noop = (): void => undefined;
    return { debug: noop, info: noop, warn: keep('warn'), error: keep('error') };
  }

  /** How many warnings were logged in all (only the first few are kept). */
  get totalWarnings(): number {
    return this.warningCount;
  }

  private observe(workerId: string, event: WorkerEvent): void {
    const counters = this.workers.get(workerId);
    if (!counters) return;
    switch (event.type) {
      case 'run-claimed':
        counters.claimed++;
        this.suspendedNow.delete(event.runId);
        if (event.via === 'wake') this.wakeClaims++;
        if (event.via === 'resume' && event.reason === 'reaped') {
          const latencyMs = event.since === undefined ? undefined : Date.now() - event.since;
          this.reapedClaims.set(event.runId, { runId: event.runId, workerId, latencyMs });
        }
        return;
      case 'run-completed':
        counters.completed++;
        return;
      case 'run-suspended':
        counters.suspended++;
        this.suspendedNow.add(event.runId);
        return;
      case 'run-handed-off':
        counters.handedOff++;
        return;
      case 'run-aborted':
        counters.aborted++;
        return;
      case 'run-failed':
        this.failures.push(`${event.runId}: ${event.error}`);
        return;
      case 'lease-lost':
        counters.leasesLost++;
        return;
      case 'leases-reaped':
        for (const runId of event.runIds) this.reapedRuns.add(runId);
        return;
      case 'dead-lettered':
        this.deadLettered++;
        return;
      default:
        return;
    }
  }
}
