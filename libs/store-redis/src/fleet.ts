/**
 * FleetStore on Redis (`store.fleet`): each worker's latest report in one hash (`fleet-reports`, workerId ->
 * '<lastSeenAt>|<report JSON>') and its expiry in a sorted set (`fleet-expiry`), both written by one
 * script on the server's clock. A listing removes reports past their expiry (a bounded number
 * per call) in the same script that reads the rest, so a dead worker's report never comes back;
 * a removed report whose worker asked for it (`fleet-keep`) is kept in the same script as an
 * expired departed worker (`fleet-departed`, pruned by `fleet-departed-until`).
 */
import type {
  DepartedWorker,
  FleetStore,
  OperationsOf,
  ReportedWorker,
  WorkerReport,
} from '@baton/core/adapter';
import { CodecError } from '@baton/core';
import { str, type StoreContext } from './context.js';

/** Stale reports (and departed workers past retention) one listing removes at most; the rest go on later listings. */
const STALE_PER_LISTING = 1_000;

function fleetKeys(ctx: StoreContext): string[] {
  const { keys } = ctx;
  return [keys.fleetReports, keys.fleetExpiry, keys.fleetKeep, keys.fleetDeparted, keys.fleetDepartedUntil];
}

async function report(
  ctx: StoreContext,
  report: WorkerReport,
  ttlMs: number,
  keepDepartedMs = 0,
): Promise<void> {
  await ctx.run('report-worker', fleetKeys(ctx), [
    report.workerId,
    JSON.stringify(report),
    ttlMs,
    keepDepartedMs,
  ]);
}

/** The script's flat reply: workerId, a score, '<fields>|...|<report JSON>' with `fields` bars before the JSON. */
function parseListing(
  reply: unknown[],
  fields: number,
): { workerId: string; score: number; parts: string[]; report: WorkerReport }[] {
  const listed = [];
  for (let i = 0; i + 2 < reply.length; i += 3) {
    const workerId = str(reply[i]);
    let rest = str(reply[i + 2]);
    const parts: string[] = [];
    for (let f = 0; f < fields; f += 1) {
      const bar = rest.indexOf('|');
      parts.push(rest.slice(0, bar));
      rest = rest.slice(bar + 1);
    }
    let report: WorkerReport;
    try {
      report = JSON.parse(rest) as WorkerReport;
    } catch (err) {
      throw new CodecError(`redis store: the fleet report of worker ${workerId} is not JSON`, { cause: err });
    }
    listed.push({ workerId, score: Number(str(reply[i + 1])), parts, report });
  }
  return listed;
}

async function list(ctx: StoreContext): Promise<ReportedWorker[]> {
  const reply = (await ctx.run('list-workers', fleetKeys(ctx), [STALE_PER_LISTING, 'live'])) as unknown[];
  return parseListing(reply, 1)
    .map(({ workerId, score, parts, report }) => ({
      ...report,
      workerId,
      lastSeenAt: Number(parts[0]),
      expiresAt: score,
    }))
    .sort((a, b) => (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0));
}

async function forget(ctx: StoreContext, workerId: string): Promise<void> {
  await ctx.run(
    'forget-worker',
    [ctx.keys.fleetReports, ctx.keys.fleetExpiry, ctx.keys.fleetKeep],
    [workerId],
  );
}

async function depart(ctx: StoreContext, report: WorkerReport, keepMs: number): Promise<void> {
  await ctx.run('depart-worker', fleetKeys(ctx), [report.workerId, JSON.stringify(report), keepMs]);
}

async function departed(ctx: StoreContext): Promise<DepartedWorker[]> {
  const reply = (await ctx.run('list-workers', fleetKeys(ctx), [STALE_PER_LISTING, 'departed'])) as unknown[];
  return parseListing(reply, 3)
    .map(({ workerId, score, parts, report }) => ({
      ...report,
      workerId,
      lastSeenAt: Number(parts[0]),
      ended: parts[1] as DepartedWorker['ended'],
      endedAt: Number(parts[2]),
      keptUntil: score,
    }))
    .sort(
      (a, b) => b.endedAt - a.endedAt || (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0),
    );
}

/** `store.fleet` on the connection. */
export const fleet: OperationsOf<StoreContext, FleetStore> = { report, list, forget, depart, departed };
