/**
 * `baton workers` and `baton backlog`: the fleet as the workers report it (client.fleet.workers:
 * each live worker's host, Baton version, workflow versions, runs held, last lease renewal,
 * draining, followed by the per-version drain table of `baton versions`) and the run queue's
 * backlog per consumer or partition (client.fleet.backlog).
 */
import type { FleetBacklog, FleetWorker } from '@baton/client';
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
      .action((_flags: unknown, command: Command) =>
        context.run(async () => {
          const client = await context.session(command).client();
          const workers = await client.fleet.workers();
          // --json keeps its shape (the workers); `baton versions --json` gives the versions.
          if (context.flags(command).json) context.io.out(json(workers));
          else {
            const { wide } = context.flags(command);
            const versions = await client.fleet.versions();
            context.io.out(`${workersTable(workers, wide)}\n${versionsTable(versions, wide)}`);
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
