/**
 * `baton workers` and `baton backlog`: the fleet as the workers report it (client.fleet.workers:
 * each live worker's host, Baton version, workflow versions, runs held, last lease renewal,
 * draining, followed by the per-version drain table of `baton versions`; with `--all` the workers
 * that left lately too, client.fleet.departed: how each ended and where the runs it held went)
 * and the run queue's backlog per consumer or partition (client.fleet.backlog).
 */
import type { DepartedFleetWorker, FleetBacklog, FleetWorker } from '@baton/client';
import type { Command } from 'commander';
import type { CommandGroup } from '../command.js';
import { parseDuration } from '../arguments.js';
import { EXIT } from '../errors.js';
import { json, time } from '../output.js';
import { listTable } from '../table.js';
import { versionsTable } from './versions.js';

/** `orders@1,2 billing@3`: a worker's workflows with their versions. */
export function workflowsText(worker: Pick<FleetWorker, 'workflows'>): string {
  return worker.workflows.map((w) => `${w.name}@${w.versions.join(',')}`).join(' ') || '-';
}

export function workersTable(workers: readonly FleetWorker[], wide = false): string {
  if (workers.length === 0) return 'no live worker reports to this store\n';
  const rows = workers.map((w) => [
    w.workerId,
    `${w.host} (pid ${w.pid})`,
    w.batonVersion,
    workflowsText(w),
    `${w.runsHeld}/${w.concurrency}`,
    time(w.startedAt),
    time(w.lastRenewalAt),
    w.draining ? 'draining' : w.connected === false ? 'disconnected' : 'live',
  ]);
  const columns = [
    { head: 'worker', shorten: 'middle', min: 16 },
    { head: 'host', shorten: 'end' },
    { head: 'baton', wideOnly: true },
    { head: 'workflows', shorten: 'end', min: 16 },
    'runs held',
    { head: 'started', wideOnly: true },
    'last renewal',
    'state',
  ] as const;
  const held = workers.reduce((n, w) => n + w.runsHeld, 0);
  return `${listTable(columns, rows, wide)}\n${workers.length} worker(s), ${held} run(s) held\n`;
}

/** Where a departed worker's run is now: `running on w-2`, `completed`, `pending, no owner yet`. */
export function whereRunWent(run: DepartedFleetWorker['heldRuns'][number], departedId: string): string {
  if (run.status === 'unknown') return 'unknown (no record: deleted by retention?)';
  if (run.owner === null)
    return run.status === 'pending' || run.status === 'running' ? `${run.status}, no owner yet` : run.status;
  if (run.owner === departedId) return `${run.status}, lease still on this worker (not lapsed yet)`;
  return `${run.status} on ${run.owner}`;
}

/** The workers that left within their retention, then where the runs each held went. */
export function departedTable(departed: readonly DepartedFleetWorker[], wide = false): string {
  if (departed.length === 0) return 'no departed worker kept by this store\n';
  const rows = departed.map((w) => [
    w.workerId,
    `${w.host} (pid ${w.pid})`,
    w.ended,
    time(w.lastSeenAt),
    time(w.endedAt),
    w.runs !== undefined && w.runs.length < w.runsHeld
      ? `${w.runsHeld} (${w.runs.length} listed)`
      : w.runsHeld,
    time(w.keptUntil),
  ]);
  const columns = [
    { head: 'departed worker', shorten: 'middle', min: 16 },
    { head: 'host', shorten: 'end' },
    'ended',
    'last seen',
    { head: 'ended at', wideOnly: true },
    'runs held',
    { head: 'kept until', wideOnly: true },
  ] as const;
  const runRows = departed.flatMap((w) =>
    w.heldRuns.map((run) => [w.workerId, run.runId, whereRunWent(run, w.workerId)]),
  );
  const runs =
    runRows.length === 0
      ? ''
      : `\n${listTable(
          [
            { head: 'held by', shorten: 'middle', min: 16 },
            { head: 'run', shorten: 'middle', min: 16 },
            { head: 'now', shorten: 'end', min: 16 },
          ],
          runRows,
          wide,
        )}\n`;
  return `${listTable(columns, rows, wide)}\n${departed.length} departed worker(s)\n${runs}`;
}

export function backlogTable(backlog: FleetBacklog, wide = false): string {
  const rows = backlog.parts.map((p) => [p.name, p.pending, p.ackPending ?? '-']);
  const columns = [{ head: 'part', shorten: 'middle', min: 24 }, 'pending', 'ack pending'] as const;
  return `${listTable(columns, rows, wide)}\n${backlog.transport}: ${backlog.total} run message(s) waiting\n`;
}

export const fleetCommands: CommandGroup = {
  register(program, context) {
    program
      .command('workers')
      .description(
        'the live workers (host, Baton version, workflow versions, runs held, last lease renewal, draining), then per workflow version the runs not yet finished and whether it drained',
      )
      .option(
        '--all',
        'the workers that left lately too (kept BATON_DEPARTED_RETENTION_MS): last seen, how each ended (handed-off or expired), the runs it held and where they are now',
      )
      .action((flags: { all?: boolean }, command: Command) =>
        context.run(async () => {
          const client = await context.session(command).client();
          const [workers, departed] = await Promise.all([
            client.fleet.workers(),
            flags.all === true ? client.fleet.departed() : undefined,
          ]);
          // --json keeps its shape (the workers); with --all, { workers, departed }.
          // `baton versions --json` gives the versions.
          if (context.flags(command).json)
            context.io.out(json(departed === undefined ? workers : { workers, departed }));
          else {
            const { wide } = context.flags(command);
            const versions = await client.fleet.versions();
            const left = departed === undefined ? '' : `\n${departedTable(departed, wide)}`;
            context.io.out(`${workersTable(workers, wide)}${left}\n${versionsTable(versions, wide)}`);
          }
          return EXIT.done;
        }),
      );

    program
      .command('backlog')
      .description(
        'the run queue’s backlog, every priority lane: NATS consumer pending and ack-pending, Kafka lag per partition',
      )
      .option('--timeout <duration>', 'how long to wait for the bus to answer, e.g. 10s (default 5s)')
      .action((flags: { timeout?: string }, command: Command) =>
        context.run(async () => {
          const timeoutMs =
            flags.timeout === undefined ? undefined : parseDuration('--timeout', flags.timeout, 1);
          const backlog = await (
            await context.session(command).client()
          ).fleet.backlog(timeoutMs !== undefined ? { timeoutMs } : {});
          context.io.out(
            context.flags(command).json ? json(backlog) : backlogTable(backlog, context.flags(command).wide),
          );
          return EXIT.done;
        }),
      );
  },
};
