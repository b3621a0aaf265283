/**
 * The in-process store's {@link FleetStore} part: each worker's latest report, stamped with the
 * store's clock, listed while its time to live lasts and removed the first time a listing finds it
 * past that.
 */
import type { ReportedWorker, WorkerReport } from '../adapter/contracts/fleet.js';
import { checkReportTtl, checkWorkerReport } from '../adapter/fleet-check.js';
import type { MemoryState } from './memory-state.js';

export function reportWorker(state: MemoryState, report: WorkerReport, ttlMs: number): void {
  const checked = checkWorkerReport(report);
  const ttl = checkReportTtl(ttlMs);
  const now = state.clock();
  state.workerReports.set(checked.workerId, { ...checked, lastSeenAt: now, expiresAt: now + ttl });
}

export function listWorkers(state: MemoryState): ReportedWorker[] {
  const now = state.clock();
  const live: ReportedWorker[] = [];
  for (const [workerId, report] of state.workerReports) {
    if (report.expiresAt <= now) state.workerReports.delete(workerId);
    else live.push(structuredClone(report));
  }
  return live.sort((a, b) => (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0));
}

export function forgetWorker(state: MemoryState, workerId: string): void {
  state.workerReports.delete(workerId);
}
