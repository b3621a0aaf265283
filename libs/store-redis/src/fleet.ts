/**
 * FleetStore on Redis (`store.fleet`): each worker's latest report in one hash (`fleet-reports`, workerId ->
 * '<lastSeenAt>|<report JSON>') and its expiry in a sorted set (`fleet-expiry`), both written by one
 * script on the server's clock. A listing removes reports past their expiry (a bounded number
 * per call) in the same script that reads the rest, so a dead worker's report never comes back.
 */
import type { FleetStore, OperationsOf, ReportedWorker, WorkerReport } from '@baton/core/adapter';
import { CodecError } from '@baton/core';
import { str, type StoreContext } from './context.js';

/** Stale reports one listing removes at most; the rest go on later listings. */
const STALE_PER_LISTING = 1_000;

async function report(ctx: StoreContext, report: WorkerReport, ttlMs: number): Promise<void> {
  await ctx.run(
    'report-worker',
    [ctx.keys.fleetReports, ctx.keys.fleetExpiry],
    [report.workerId, JSON.stringify(report), ttlMs],
  );
}

async function list(ctx: StoreContext): Promise<ReportedWorker[]> {
  const reply = (await ctx.run(
    'list-workers',
    [ctx.keys.fleetReports, ctx.keys.fleetExpiry],
    [STALE_PER_LISTING],
  )) as unknown[];
  const workers: ReportedWorker[] = [];
  for (let i = 0; i + 2 < reply.length; i += 3) {
    const workerId = str(reply[i]);
    const stored = str(reply[i + 2]);
    const bar = stored.indexOf('|');
    let report: WorkerReport;
    try {
      report = JSON.parse(stored.slice(bar + 1)) as WorkerReport;
    } catch (err) {
      throw new CodecError(`redis store: the fleet report of worker ${workerId} is not JSON`, { cause: err });
    }
    workers.push({
      ...report,
      workerId,
      lastSeenAt: Number(stored.slice(0, bar)),
      expiresAt: Number(str(reply[i + 1])),
    });
  }
  return workers.sort((a, b) => (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0));
}

async function forget(ctx: StoreContext, workerId: string): Promise<void> {
  await ctx.run('forget-worker', [ctx.keys.fleetReports, ctx.keys.fleetExpiry], [workerId]);
}

/** `store.fleet` on the connection. */
export const fleet: OperationsOf<StoreContext, FleetStore> = { report, list, forget };
