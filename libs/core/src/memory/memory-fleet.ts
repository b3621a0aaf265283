/**
 * The in-process store's {@link FleetStore} (`store.fleet`): each worker's latest report, stamped with the
 * store's clock, listed while its time to live lasts and removed the first time a listing finds it
 * past that.
 */
import type { FleetStore, ReportedWorker, WorkerReport } from '../adapter/contracts/fleet.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import type { MemoryState } from './memory-state.js';

function report(state: MemoryState, report: WorkerReport, ttlMs: number): void {
  const now = state.clock();
  state.workerReports.set(report.workerId, { ...report, lastSeenAt: now, expiresAt: now + ttlMs });
}

function list(state: MemoryState): ReportedWorker[] {
  const now = state.clock();
  const live: ReportedWorker[] = [];
  for (const [workerId, report] of state.workerReports) {
    if (report.expiresAt <= now) state.workerReports.delete(workerId);
    else live.push(structuredClone(report));
  }
  return live.sort((a, b) => (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0));
}

function forget(state: MemoryState, workerId: string): void {
  state.workerReports.delete(workerId);
}

/** `store.fleet` over the state. */
export const fleet: OperationsOf<MemoryState, FleetStore> = { report, list, forget };
