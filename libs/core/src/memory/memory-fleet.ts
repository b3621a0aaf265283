/**
 * The in-process store's {@link FleetStore} (`store.fleet`): each worker's latest report, stamped with the
 * store's clock, listed while its time to live lasts and removed the first time a listing finds it
 * past that, kept then as an expired departed worker when the report asked for it; departed
 * workers until their retention runs out.
 */
import type {
  DepartedWorker,
  FleetStore,
  ReportedWorker,
  WorkerEnd,
  WorkerReport,
} from '../adapter/contracts/fleet.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import type { MemoryState } from './memory-state.js';

function byWorkerId(a: { workerId: string }, b: { workerId: string }): number {
  return a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0;
}

function report(state: MemoryState, report: WorkerReport, ttlMs: number, keepDepartedMs = 0): void {
  const now = state.clock();
  state.workerReports.set(report.workerId, { ...report, lastSeenAt: now, expiresAt: now + ttlMs });
  state.departedKeepMs.set(report.workerId, keepDepartedMs);
  state.departedWorkers.delete(report.workerId);
}

function keepDeparted(
  state: MemoryState,
  last: WorkerReport & { lastSeenAt: number },
  ended: WorkerEnd,
  endedAt: number,
  keepMs: number,
): void {
  const { workerId } = last;
  if (keepMs <= 0 || endedAt + keepMs <= state.clock()) return;
  const { expiresAt: _expiresAt, ...kept } = last as ReportedWorker;
  state.departedWorkers.set(workerId, { ...kept, ended, endedAt, keptUntil: endedAt + keepMs });
}

/** Moves expired reports to the departed workers and prunes departed ones past their retention. */
function sweep(state: MemoryState): void {
  const now = state.clock();
  for (const [workerId, report] of state.workerReports) {
    if (report.expiresAt > now) continue;
    state.workerReports.delete(workerId);
    keepDeparted(state, report, 'expired', report.expiresAt, state.departedKeepMs.get(workerId) ?? 0);
    state.departedKeepMs.delete(workerId);
  }
  for (const [workerId, departed] of state.departedWorkers)
    if (departed.keptUntil <= now) state.departedWorkers.delete(workerId);
}

function list(state: MemoryState): ReportedWorker[] {
  sweep(state);
  return [...state.workerReports.values()].map((r) => structuredClone(r)).sort(byWorkerId);
}

function forget(state: MemoryState, workerId: string): void {
  state.workerReports.delete(workerId);
  state.departedKeepMs.delete(workerId);
}

function depart(state: MemoryState, report: WorkerReport, keepMs: number): void {
  forget(state, report.workerId);
  const now = state.clock();
  keepDeparted(state, { ...report, lastSeenAt: now }, 'handed-off', now, keepMs);
}

function departed(state: MemoryState): DepartedWorker[] {
  sweep(state);
  return [...state.departedWorkers.values()]
    .map((d) => structuredClone(d))
    .sort((a, b) => b.endedAt - a.endedAt || byWorkerId(a, b));
}

/** `store.fleet` over the state. */
export const fleet: OperationsOf<MemoryState, FleetStore> = { report, list, forget, depart, departed };
