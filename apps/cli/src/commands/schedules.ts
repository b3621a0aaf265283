/**
 * `baton schedules list|show|create|update|pause|resume|delete`: schedules as client.schedules
 * keeps them (docs/schedules.md). `show` adds the next due times; `create` takes the workflow as
 * name@version, the input as JSON, and a cron expression with a time zone or an interval; `update`
 * takes the same flags, each one it is given replacing what the schedule has.
 */
import type { ScheduleRecord } from '@baton/client';
import type { CreateScheduleOptions, ScheduleUpdate } from '@baton/client';
import type { Command } from 'commander';
import type { CommandGroup } from '../command.js';
import { EXIT, RefusedError, UsageError } from '../errors.js';
import { parseDuration, parseJson, workflowRef } from '../arguments.js';
import { json, RUN_ID, spanText, time, valueText } from '../output.js';
import { fieldTable, listTable } from '../table.js';

/** `every 1m`, `cron 0 2 * * * (Europe/Paris)`. */
function specText(schedule: ScheduleRecord): string {
  const { spec } = schedule;
  return 'everyMs' in spec
    ? `every ${spanText(spec.everyMs)}`
    : `cron ${spec.cron} (${spec.timeZone ?? 'UTC'})`;
}

function catchupText(schedule: ScheduleRecord): string {
  const { catchup } = schedule;
  return catchup.missed === 'run'
    ? `run the latest ${catchup.limit} missed, grace ${spanText(catchup.graceMs)}`
    : `skip missed, grace ${spanText(catchup.graceMs)}`;
}

export function schedulesTable(
  schedules: readonly ScheduleRecord[],
  cursor: string | undefined,
  wide = false,
): string {
  if (schedules.length === 0) return 'no schedules\n';
  const rows = schedules.map((s) => [
    s.scheduleId,
    `${s.workflow}@${s.version}`,
    specText(s),
    s.paused ? 'paused' : 'active',
    s.paused ? '-' : time(s.nextDueAt),
    s.lastRunId ?? '-',
  ]);
  const more = cursor === undefined ? '' : `more: --cursor ${cursor}\n`;
  const columns = [
    { head: 'schedule', shorten: 'middle' },
    { head: 'workflow', shorten: 'end' },
    { head: 'when', shorten: 'end', min: 32 },
    'state',
    'next due',
    { ...RUN_ID, head: 'last run', wideOnly: true },
  ] as const;
  return `${listTable(columns, rows, wide)}\n${more}`;
}

function showText(schedule: ScheduleRecord, upcoming: number[], wide: boolean): string {
  const rows: [string, string | number][] = [
    ['schedule', schedule.scheduleId],
    ['workflow', `${schedule.workflow}@${schedule.version}`],
    ['when', specText(schedule)],
    ['state', schedule.paused ? 'paused' : 'active'],
    ['overlap', schedule.overlap],
    ['catch-up', catchupText(schedule)],
    ['jitter', spanText(schedule.jitterMs)],
    ['next due', upcoming.map((t) => time(t)).join(', ') || '-'],
    ['queued due time', time(schedule.queuedDueAt)],
    ['last due time', time(schedule.lastDueAt)],
    ['last run', schedule.lastRunId ?? '-'],
    ['input', valueText(schedule.input)],
    ['revision', schedule.revision],
    ['created', time(schedule.createdAt)],
    ['updated', time(schedule.updatedAt)],
  ];
  if (schedule.note !== undefined) rows.push(['note', schedule.note]);
  return `${fieldTable(rows, wide)}\n`;
}

function whole(flag: string, value: string, min = 0): number {
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new UsageError(`${flag} '${value}' is not a whole number${min > 0 ? ` of ${min} or more` : ''}`);
  return Number(value);
}

/** The flags `create` and `update` share. */
interface ScheduleFlags {
  input?: string;
  cron?: string;
  timeZone?: string;
  every?: string;
  overlap?: string;
  catchup?: string;
  catchupLimit?: string;
  grace?: string;
  jitter?: string;
  note?: string;
}

interface CreateFlags extends ScheduleFlags {
  id?: string;
  paused?: boolean;
}

interface UpdateFlags extends ScheduleFlags {
  version?: string;
}

function createOptions(flags: CreateFlags): CreateScheduleOptions {
  if ((flags.cron === undefined) === (flags.every === undefined))
    throw new UsageError("give exactly one of --cron '<expression>' and --every <duration>");
  return {
    ...(flags.id !== undefined && { scheduleId: flags.id }),
    ...scheduleOptions(flags),
    ...(flags.paused === true && { paused: true }),
  };
}

/** What `update` changes: only what its flags name. */
function updateOptions(flags: UpdateFlags, input: unknown): ScheduleUpdate {
  if (flags.cron !== undefined && flags.every !== undefined)
    throw new UsageError("give --cron '<expression>' or --every <duration>, not both");
  if (flags.timeZone !== undefined && flags.cron === undefined)
    throw new UsageError('--time-zone goes with --cron: give the expression again with its zone');
  const update: ScheduleUpdate = {
    ...scheduleOptions(flags),
    ...(flags.version !== undefined && { version: whole('--version', flags.version, 1) }),
    ...(input !== undefined && { input }),
  };
  if (Object.keys(update).length === 0)
    throw new UsageError(
      'nothing to update: give at least one of --cron, --every, --input, --version, --overlap, --catchup, ' +
        '--catchup-limit, --grace, --jitter, --note',
    );
  return update;
}

/** The timing and policies given by flags (any of them). */
function scheduleOptions(flags: ScheduleFlags): CreateScheduleOptions {
  if (flags.overlap !== undefined && !['skip', 'queue-one', 'allow'].includes(flags.overlap))
    throw new UsageError(`--overlap '${flags.overlap}': give skip, queue-one or allow`);
  if (flags.catchup !== undefined && !['skip', 'run'].includes(flags.catchup))
    throw new UsageError(`--catchup '${flags.catchup}': give skip or run`);
  const catchup = {
    ...(flags.catchup !== undefined && { missed: flags.catchup as 'skip' | 'run' }),
    ...(flags.catchupLimit !== undefined && { limit: whole('--catchup-limit', flags.catchupLimit, 1) }),
    ...(flags.grace !== undefined && { graceMs: parseDuration('--grace', flags.grace) }),
  };
  const every = flags.every === undefined ? undefined : parseDuration('--every', flags.every);
  return {
    ...(flags.cron !== undefined && { cron: flags.cron }),
    ...(flags.timeZone !== undefined && { timeZone: flags.timeZone }),
    ...(every !== undefined && { every }),
    ...(flags.overlap !== undefined && { overlap: flags.overlap as CreateScheduleOptions['overlap'] }),
    ...(Object.keys(catchup).length > 0 && { catchup }),
    ...(flags.jitter !== undefined && { jitter: parseDuration('--jitter', flags.jitter) }),
    ...(flags.note !== undefined && { note: flags.note }),
  };
}

/** `--input`: JSON, or '-' for standard input; undefined when not given. */
async function inputFlag(raw: string | undefined, stdin: () => Promise<string>): Promise<unknown> {
  const text = raw === '-' ? await stdin() : raw;
  return text === undefined ? undefined : parseJson('--input', text);
}

/** The options `create` and `update` share, on a command. */
function withScheduleOptions(command: Command): Command {
  return command
    .option('--input <json>', "the runs' input as JSON; '-' reads it from standard input")
    .option('--cron <expression>', "a cron expression: 5 fields, or 6 with seconds first, e.g. '0 2 * * *'")
    .option('--time-zone <zone>', 'the IANA time zone of --cron (default UTC)')
    .option('--every <duration>', 'a fixed interval, e.g. 30s, 15m, 1h, or milliseconds (1s at least)')
    .option(
      '--overlap <policy>',
      'skip | queue-one | allow, when the previous run is not finished (default skip)',
    )
    .option('--catchup <policy>', 'skip | run, for due times missed while no worker ran (default skip)')
    .option('--catchup-limit <n>', 'how many missed due times `run` starts at most (default 1)')
    .option(
      '--grace <duration>',
      'how late a due time may be found and still be on time, e.g. 5m (default 1m)',
    )
    .option(
      '--jitter <duration>',
      'start each run up to this much later, fixed per due time, e.g. 2m (default 0)',
    )
    .option('--note <text>', 'free text for operators');
}

export const schedulesCommands: CommandGroup = {
  register(program, context) {
    const schedules = program
      .command('schedules')
      .description('schedules: runs the fleet starts at due times (cron with a time zone, or an interval)');

    schedules
      .command('list')
      .description('schedules by id, a page at a time')
      .option('--workflow <name>', 'only schedules of this workflow')
      .option('--paused', 'only paused schedules')
      .option('--active', 'only schedules that are not paused')
      .option('--limit <n>', 'schedules per page, 1-1000 (default 100)')
      .option('--cursor <id>', 'the cursor a previous page printed')
      .action(
        (
          flags: { workflow?: string; paused?: boolean; active?: boolean; limit?: string; cursor?: string },
          command: Command,
        ) =>
          context.run(async () => {
            if (flags.paused && flags.active) throw new UsageError('give --paused or --active, not both');
            const page = await (
              await context.session(command).client()
            ).schedules.list({
              ...(flags.workflow !== undefined && { workflow: flags.workflow }),
              ...(flags.paused && { paused: true }),
              ...(flags.active && { paused: false }),
              ...(flags.limit !== undefined && { limit: whole('--limit', flags.limit) }),
              ...(flags.cursor !== undefined && { cursor: flags.cursor }),
            });
            context.io.out(
              context.flags(command).json
                ? json(page)
                : schedulesTable(page.schedules, page.cursor, context.flags(command).wide),
            );
            return EXIT.done;
          }),
      );

    schedules
      .command('show')
      .description('one schedule, with its next due times')
      .argument('<schedule-id>')
      .option('--next <n>', 'how many next due times to show (default 5)')
      .action((scheduleId: string, flags: { next?: string }, command: Command) =>
        context.run(async () => {
          const client = await context.session(command).client();
          const schedule = await client.schedules.get(scheduleId);
          const upcoming = await client.schedules.upcoming(
            scheduleId,
            flags.next === undefined ? 5 : whole('--next', flags.next, 1),
          );
          context.io.out(
            context.flags(command).json
              ? json({ ...schedule, upcoming })
              : showText(schedule, upcoming, context.flags(command).wide === true),
          );
          return EXIT.done;
        }),
      );

    withScheduleOptions(
      schedules
        .command('create')
        .description('create a schedule of a workflow (name@version)')
        .argument('<workflow>', 'name@version, e.g. reports@2')
        .option('--id <schedule-id>', 'the schedule id (default: a new random id)')
        .option('--paused', 'create it paused'),
    ).action((workflow: string, flags: CreateFlags, command: Command) =>
      context.run(async () => {
        const ref = workflowRef(workflow, 1);
        const options = createOptions(flags);
        const input = (await inputFlag(flags.input, () => context.stdin())) ?? null;
        const schedule = await (
          await context.session(command).client()
        ).schedules.create(ref, input, options);
        context.io.out(
          context.flags(command).json
            ? json(schedule)
            : `created schedule ${schedule.scheduleId}; next due ${schedule.paused ? '- (paused)' : time(schedule.nextDueAt)}\n`,
        );
        return EXIT.done;
      }),
    );

    withScheduleOptions(
      schedules
        .command('update')
        .description(
          'change a schedule: each flag given replaces what it has (new timing: due times from now on)',
        )
        .argument('<schedule-id>')
        .option('--version <n>', 'another version of the same workflow for the runs to come'),
    ).action((scheduleId: string, flags: UpdateFlags, command: Command) =>
      context.run(async () => {
        const update = updateOptions(flags, await inputFlag(flags.input, () => context.stdin()));
        const schedule = await (await context.session(command).client()).schedules.update(scheduleId, update);
        context.io.out(
          context.flags(command).json
            ? json(schedule)
            : `updated schedule ${schedule.scheduleId} (revision ${schedule.revision}); next due ${schedule.paused ? '- (paused)' : time(schedule.nextDueAt)}\n`,
        );
        return EXIT.done;
      }),
    );

    for (const [name, verb, done, already] of [
      ['pause', 'pause a schedule: it starts nothing until resumed', 'paused', 'was paused already'],
      ['resume', 'resume a paused schedule at its next due time', 'resumed', 'was not paused'],
    ] as const) {
      schedules
        .command(name)
        .description(verb)
        .argument('<schedule-id>')
        .action((scheduleId: string, _flags: unknown, command: Command) =>
          context.run(async () => {
            const client = await context.session(command).client();
            const changed = await client.schedules[name](scheduleId);
            const schedule = await client.schedules.get(scheduleId);
            context.io.out(
              context.flags(command).json
                ? json({ scheduleId, changed, paused: schedule.paused, nextDueAt: schedule.nextDueAt })
                : changed
                  ? `${done} schedule ${scheduleId}${schedule.paused ? '' : `; next due ${time(schedule.nextDueAt)}`}\n`
                  : `schedule ${scheduleId} ${already}; nothing changed\n`,
            );
            return EXIT.done;
          }),
        );
    }

    schedules
      .command('delete')
      .description('delete a schedule (the runs it started stay)')
      .argument('<schedule-id>')
      .action((scheduleId: string, _flags: unknown, command: Command) =>
        context.run(async () => {
          const deleted = await (await context.session(command).client()).schedules.delete(scheduleId);
          if (!deleted) throw new RefusedError(`no schedule ${scheduleId} in the store; nothing was deleted`);
          context.io.out(
            context.flags(command).json ? json({ scheduleId, deleted }) : `deleted schedule ${scheduleId}\n`,
          );
          return EXIT.done;
        }),
      );
  },
};
