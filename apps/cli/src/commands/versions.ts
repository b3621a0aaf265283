/**
 * `baton versions`: per workflow version, the work that still needs it (unfinished runs,
 * dead-lettered starts) and the live workers that can take it, and whether it is drained
 * (client.fleet.versions). `baton versions --drained <workflow>@<version>` is the gate a deploy
 * pipeline puts before removing a version's code: exit 0 only when nothing needs it
 * (client.fleet.drained), 1 when something does (or the wait ran out), 2 for a bad flag.
 */
import type { VersionDrain, VersionsListing } from '@baton/client';
import type { Command } from 'commander';
import type { CommandContext, CommandGroup } from '../command.js';
import { parseDuration } from '../arguments.js';
import { EXIT, UsageError, type ExitCode } from '../errors.js';
import { json } from '../output.js';
import { listTable } from '../table.js';

/** `orders@2` → { workflow: 'orders', version: 2 }; UsageError otherwise. */
export function parseWorkflowVersion(value: string): { workflow: string; version: number } {
  const at = value.lastIndexOf('@');
  const workflow = value.slice(0, at);
  const version = Number(value.slice(at + 1));
  if (at <= 0 || !/^\d+$/.test(value.slice(at + 1)) || version < 1)
    throw new UsageError(`--drained '${value}': give <workflow>@<version>, for example orders@1`);
  return { workflow, version };
}

/** `pending 1, running 2`, or `-`. */
function byStatusText(v: VersionDrain): string {
  const parts = Object.entries(v.unfinished.byStatus).map(([status, n]) => `${status} ${n}`);
  return parts.length === 0 ? '-' : parts.join(', ');
}

/** `drained`, `stranded` (work needs it, no live worker has it) or `in use`. */
export function stateText(v: VersionDrain): string {
  return v.drained ? 'drained' : v.stranded ? 'stranded' : 'in use';
}

export function versionsTable(listing: VersionsListing, wide = false): string {
  if (listing.versions.length === 0)
    return 'no workflow version is registered by a live worker or needed by a run\n';
  const rows = listing.versions.map((v) => [
    `${v.workflow}@${v.version}`,
    `${v.unfinished.total}${listing.complete ? '' : '+'}`,
    byStatusText(v),
    v.deadLetteredStarts,
    v.workers.join(' ') || '-',
    v.drainingWorkers.join(' ') || '-',
    stateText(v),
  ]);
  const note = listing.complete
    ? ''
    : 'counts stopped at the walk limit and are lower bounds (+); drained/stranded are exact\n';
  const columns = [
    { head: 'version', shorten: 'end' },
    'unfinished',
    { head: 'by status', shorten: 'end' },
    'dead-lettered starts',
    { head: 'live workers', shorten: 'end' },
    { head: 'draining', shorten: 'end' },
    'state',
  ] as const;
  return `${listTable(columns, rows, wide)}\n${note}`;
}

/** One line saying whether the version is drained and, if not, what still needs it. */
export function drainedLine(v: VersionDrain): string {
  const name = `${v.workflow}@${v.version}`;
  const workers =
    v.workers.length === 0 ? 'no live worker has it' : `live workers with it: ${v.workers.join(', ')}`;
  if (v.drained) return `${name}: drained (no unfinished run, no dead-lettered start); ${workers}\n`;
  const runs = v.unfinished.total === 0 ? 'no unfinished run' : `unfinished runs ${byStatusText(v)}`;
  const strand = v.stranded ? ' (stranded: start a worker that registers it)' : '';
  return `${name}: not drained: ${runs}, ${v.deadLetteredStarts} dead-lettered start(s); ${workers}${strand}\n`;
}

async function gate(
  context: CommandContext,
  command: Command,
  target: string,
  flags: { wait?: string; interval?: string },
): Promise<ExitCode> {
  const { workflow, version } = parseWorkflowVersion(target);
  const waitMs = flags.wait === undefined ? 0 : parseDuration('--wait', flags.wait, 1);
  const intervalMs = flags.interval === undefined ? 5_000 : parseDuration('--interval', flags.interval, 1);
  const client = await context.session(command).client();
  const deadline = Date.now() + waitMs;
  for (;;) {
    const drain = await client.fleet.drained(workflow, version);
    const last = drain.drained || Date.now() + intervalMs > deadline || context.interrupt.aborted;
    if (last) {
      context.io.out(context.flags(command).json ? json(drain) : drainedLine(drain));
      return drain.drained ? EXIT.done : EXIT.refused;
    }
    context.io.err(drainedLine(drain));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, intervalMs);
      context.interrupt.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}

export const versionsCommands: CommandGroup = {
  register(program, context) {
    program
      .command('versions')
      .description(
        'per workflow version: unfinished runs, dead-lettered starts, the live workers that can take them, drained or not',
      )
      .option('--workflow <name>', 'only this workflow’s versions')
      .option(
        '--drained <workflow@version>',
        'exit 0 only when no unfinished run and no dead-lettered start needs this version (the deploy gate)',
      )
      .option(
        '--wait <duration>',
        'with --drained: keep asking until drained or this long has passed, e.g. 10m',
      )
      .option('--interval <duration>', 'with --wait: how often to ask, e.g. 30s (default 5s)')
      .action(
        (
          flags: { workflow?: string; drained?: string; wait?: string; interval?: string },
          command: Command,
        ) =>
          context.run(async () => {
            if (flags.drained !== undefined) {
              if (flags.workflow !== undefined)
                throw new UsageError(
                  '--workflow and --drained do not go together; --drained names the workflow',
                );
              return gate(context, command, flags.drained, flags);
            }
            if (flags.wait !== undefined || flags.interval !== undefined)
              throw new UsageError('--wait and --interval need --drained <workflow>@<version>');
            const client = await context.session(command).client();
            const listing = await client.fleet.versions(
              flags.workflow !== undefined ? { workflow: flags.workflow } : {},
            );
            context.io.out(
              context.flags(command).json
                ? json(listing)
                : versionsTable(listing, context.flags(command).wide),
            );
            return EXIT.done;
          }),
      );
  },
};
