/**
 * What the worker does when its store reports that it lost its data (a Redis without persistence
 * restarted empty; see `Store.onDataLoss`): one error line naming the runs this worker held, which
 * are gone from the store and cannot resume, and what to do; a metric; an event; and the health
 * snapshot keeps the last loss.
 *
 * The runs named are those in flight here when the loss was found, and those whose session ended
 * aborted (a lease lost, a store call failed) shortly before: after a restart the worker's queued
 * renewals reach the empty server before the store has checked its marker, so the sessions of the
 * lost runs may already have stopped by then.
 */
import type { StoreDataLoss } from '@baton/core/adapter';
import type { WorkerInstruments } from '@baton/telemetry';
import type { WorkerEvent } from './events.js';
import type { Logger } from './logger.js';

/** How long an aborted session is remembered as possibly lost: longer than an outage's reconnect. */
const RECENT_MS = 60_000;
/** At most this many aborted sessions are remembered; a loss names what fits. */
const RECENT_LIMIT = 10_000;

/** The last data loss a worker saw, for its health snapshot. */
export interface DataLossReport {
  /** Local time it was found. */
  at: number;
  /** What the store found. */
  reason: string;
  /** Runs this worker held, now unknown to the store. */
  runIds: string[];
}

export class DataLossWatch {
  /** Run id -> local time its session ended aborted. */
  private readonly aborted = new Map<string, number>();
  private lastReport: DataLossReport | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly instruments: WorkerInstruments,
    private readonly emit: (event: WorkerEvent) => void,
    private readonly clock: () => number,
  ) {}

  /** The last loss found, if any. */
  get last(): DataLossReport | undefined {
    return this.lastReport;
  }

  /** A session of `runId` ended without finishing, suspending or handing off. */
  noteAborted(runId: string): void {
    const now = this.clock();
    this.prune(now);
    this.aborted.delete(runId);
    if (this.aborted.size < RECENT_LIMIT) this.aborted.set(runId, now);
  }

  /** The store lost its data while this worker held `inFlight` (and maybe recently aborted runs). */
  report(loss: StoreDataLoss, inFlight: readonly string[]): DataLossReport {
    const now = this.clock();
    this.prune(now);
    const runIds = [...new Set([...inFlight, ...this.aborted.keys()])].sort();
    this.aborted.clear();
    const report = { at: now, reason: loss.reason, runIds };
    this.lastReport = report;
    this.instruments.storeDataLosses.add(1);
    this.logger.error(
      { store: loss.store, reason: loss.reason, lostRuns: runIds.length, runIds },
      `the ${loss.store} store lost its data: ${loss.reason}; ${runIds.length} run(s) this worker held ` +
        `are gone and will not resume${runIds.length > 0 ? ` (${runIds.slice(0, 20).join(', ')}${runIds.length > 20 ? ', ...' : ''})` : ''}. ` +
        'Other runs of the fleet were lost too. Re-enqueue lost runs from their producer under the same ' +
        'idempotency key, and give the store durable storage (Redis: appendonly yes with appendfsync ' +
        'everysec or always; see docs/operations.md, "Redis lost its data")',
    );
    this.emit({ type: 'store-data-lost', store: loss.store, reason: loss.reason, runIds });
    return report;
  }

  private prune(now: number): void {
    for (const [runId, at] of this.aborted) {
      if (now - at <= RECENT_MS) break; // insertion order is time order
      this.aborted.delete(runId);
    }
  }
}
