/**
 * `baton runs …`: list, count, describe, history (the timeline), start, signal, update, query, fork,
 * tail (a run's stream, runs-tail.ts), cancel, retry, delete, pause, resume. cancel, retry, delete,
 * pause and resume take one run id or filters; with filters they are bulk actions (client.bulk): a
 * dry run that prints how many runs match unless `--yes` is given.
 */
import {
  BULK_RUN_ACTION_NAMES,
  BULK_RUN_ACTIONS,
  CheckpointIntegrityError,
  isFinishedRun,
  type BulkRunAction,
  type BulkRunActionName,
  type Client,
  type RunDescription,
  type RunFilter,
  RUN_PRIORITIES,
  type RunPriority,
  type TimelineItem,
} from '@baton/client';
import { randomUUID } from 'node:crypto';
import { ConfigError } from '@baton/core';
import type { Command } from 'commander';
import type { CommandContext, CommandGroup } from '../command.js';
import { EXIT, RefusedError, UsageError, type ExitCode } from '../errors.js';
import { addFilterFlags, filterFromFlags, hasFilter, queryFromFlags, type FilterFlags } from '../filters.js';
import { parseDuration, parseJson, workflowRef } from '../arguments.js';
import { attributeText, json, runsTable, summaryText, time, timelineTable, valueText } from '../output.js';
import { fieldTable } from '../table.js';
import { bulkExit, bulkProgress } from './progress.js';
import { checkRegistered, checkStartArguments } from './start-checks.js';
import { promisesTable } from './promises.js';
import { described } from './run-lookup.js';
import { registerTail } from './runs-tail.js';

export const runsCommands: CommandGroup = {
  register(program, context) {
    const runs = program.command('runs').description('find, inspect and steer runs');

    addFilterFlags(
      runs.command('list').description('list runs matching the filters, a page at a time'),
      true,
    ).action((flags: FilterFlags, command: Command) =>
      context.run(async () => {
        const query = queryFromFlags(flags);
        const page = await (await context.session(command).client()).runs.list(query);
        context.io.out(
          context.flags(command).json
            ? json({ runs: page.runs, ...(page.cursor !== undefined && { cursor: page.cursor }) })
            : runsTable(page.runs, page.cursor, context.flags(command).wide),
        );
        return EXIT.done;
      }),
    );

    addFilterFlags(
      runs
        .command('count')
        .description(
          'how many runs there are, by status: all of them, the runs of one keyword or boolean --attr ' +
            '(kept counts), or the runs any other filters match (counted run by run)',
        ),
      false,
    ).action((flags: FilterFlags, command: Command) =>
      context.run(async () => {
        const client = await context.session(command).client();
        const counted = await countRuns(client, filterFromFlags(flags));
        context.io.out(context.flags(command).json ? json(counted) : countsText(counted));
        return EXIT.done;
      }),
    );

    runs
      .command('describe')
      .description(
        'a run record and its lease, its parent, the child workflows it started, its updates under way and its pending durable promises',
      )
      .argument('<run-id>')
      .action((runId: string, _flags: unknown, command: Command) =>
        context.run(async () => {
          const client = await context.session(command).client();
          const run = await described(client, runId);
          const children = (await client.runs.children(runId, CHILDREN_SHOWN)).map((c) => ({
            runId: c.runId,
            workflow: c.workflow,
            status: c.status,
          }));
          // An operator's describe shows the pending durable promises with their tokens (secrets).
          const promises = isFinishedRun(run.status) ? [] : await client.promises.pending(runId);
          const updates = isFinishedRun(run.status) ? { underWay: [] } : await updatesUnderWay(client, runId);
          context.io.out(
            context.flags(command).json
              ? json({ ...run, children, updatesUnderWay: updates.underWay ?? null, promises })
              : describeText(run, children, updates, context.flags(command).wide === true) +
                  (promises.length === 0
                    ? ''
                    : promisesTable(promises, context.flags(command).wide === true)),
          );
          return EXIT.done;
        }),
      );

    runs
      .command('history')
      .description(
        'the run timeline: activities (attempts, durations, keys, worker, epoch), signals, timers, updates, ' +
          'durable promises, attribute changes, checkpoints, leases',
      )
      .argument('<run-id>')
      .option('--raw', 'the decoded journal entries instead of the timeline (with --json)')
      .action((runId: string, flags: { raw?: boolean }, command: Command) =>
        context.run(async () => {
          const client = await context.session(command).client();
          await described(client, runId);
          if (flags.raw === true) {
            context.io.out(json(await client.history(runId)));
            return EXIT.done;
          }
          const timeline = await client.runs.timeline(runId);
          context.io.out(
            context.flags(command).json
              ? json(timeline)
              : timelineTable(timeline, context.flags(command).wide),
          );
          return EXIT.done;
        }),
      );

    runs
      .command('start')
      .description('start a run of a workflow (name@version)')
      .argument('<workflow>', 'name@version, e.g. orders@2')
      .option('--input <json>', "the input as JSON; '-' reads it from standard input")
      .option('--run-id <id>', 'use this run id')
      .option('--key <idempotency-key>', 'the same key always yields the same run')
      .option(
        '--priority <level>',
        'high, normal (the default) or low: which runs a worker with a choice claims first (docs/priorities.md)',
      )
      .option(
        '--allow-unregistered',
        'start it even when no live worker registers the workflow@version (a fleet that is not up yet)',
      )
      .action(
        (
          workflow: string,
          flags: {
            input?: string;
            runId?: string;
            key?: string;
            priority?: string;
            allowUnregistered?: boolean;
          },
          command: Command,
        ) =>
          context.run(async () => {
            const ref = workflowRef(workflow, 0);
            checkStartArguments(ref, flags);
            const priority = priorityFlag(flags.priority);
            const raw = flags.input === '-' ? await context.stdin() : flags.input;
            const input = raw === undefined ? undefined : parseJson('--input', raw);
            const client = await context.session(command).client();
            if (flags.allowUnregistered !== true) await checkRegistered(client, ref);
            const handle = await client.start(ref, input, {
              ...(flags.runId !== undefined && { runId: flags.runId }),
              ...(flags.key !== undefined && { idempotencyKey: flags.key }),
              ...(priority !== undefined && { priority }),
            });
            context.io.out(
              context.flags(command).json ? json({ runId: handle.runId }) : `started run ${handle.runId}\n`,
            );
            return EXIT.done;
          }),
      );

    runs
      .command('signal')
      .description('deliver a signal to a run that has not finished (or that continued as new: it goes on)')
      .argument('<run-id>')
      .argument('<name>', 'the signal name the workflow waits for')
      .option('--payload <json>', 'the payload as JSON')
      .option('--signal-id <id>', 'de-duplication id (a second signal with it is dropped)')
      .action(
        (runId: string, name: string, flags: { payload?: string; signalId?: string }, command: Command) =>
          context.run(async () => {
            const payload = flags.payload === undefined ? undefined : parseJson('--payload', flags.payload);
            const client = await context.session(command).client();
            const run = await described(client, runId);
            // A run that continued as new passes the signal on to its successor (docs/continue-as-new.md).
            if (isFinishedRun(run.status) && run.continuedAs === undefined)
              throw new RefusedError(
                `run ${runId} is ${run.status}; a signal to a finished run is dropped, so none was sent`,
              );
            await client.signal(runId, name, payload, {
              ...(flags.signalId !== undefined && { signalId: flags.signalId }),
            });
            const onward =
              run.continuedAs === undefined
                ? ''
                : ` (continued as new: it goes on to run ${run.continuedAs})`;
            context.io.out(
              context.flags(command).json
                ? json({ runId, signal: name })
                : `signal '${name}' sent to run ${runId}${onward}\n`,
            );
            return EXIT.done;
          }),
      );

    runs
      .command('update')
      .description("send an update to a run and print its handler's answer (docs/updates.md)")
      .argument('<run-id>')
      .argument('<name>', 'the update name the workflow handles (ctx.onUpdate)')
      .option('--args <json>', "the update's arguments as JSON ('-' reads them from stdin)")
      .option(
        '--update-id <id>',
        'the update id: a repeat with it is applied once and answered with the kept result',
      )
      .option('--timeout <duration>', 'how long to wait for the answer (500ms, 30s, 2m)', '30s')
      .action(
        (
          runId: string,
          name: string,
          flags: { args?: string; updateId?: string; timeout: string },
          command: Command,
        ) =>
          context.run(async () => {
            const timeoutMs = parseDuration('--timeout', flags.timeout);
            const raw = flags.args === '-' ? await context.stdin() : flags.args;
            const args = raw === undefined ? undefined : parseJson('--args', raw);
            const updateId = flags.updateId ?? randomUUID();
            const client = await context.session(command).client();
            // Refused before anything is sent: an unknown run (404), a finished one (the client
            // names its status), an id already answered (its kept result is the answer).
            const result = await client.update(runId, name, args, { updateId, timeoutMs });
            context.io.out(
              context.flags(command).json
                ? json({ runId, updateId, status: 'completed', result: result ?? null })
                : `update '${name}' (id ${updateId}) of run ${runId} answered: ${valueText(result)}\n`,
            );
            return EXIT.done;
          }),
      );

    runs
      .command('query')
      .description(
        "ask a run's query handler (ctx.onQuery) for its answer; changes nothing (docs/queries.md)",
      )
      .argument('<run-id>')
      .argument('<name>', 'the query name the workflow registers')
      .option('--args <json>', "the query's arguments as JSON")
      .option('--timeout <duration>', 'how long to wait for the answer (e.g. 10s, 2m)', '10s')
      .action((runId: string, name: string, flags: { args?: string; timeout: string }, command: Command) =>
        context.run(async () => {
          const args = flags.args === undefined ? undefined : parseJson('--args', flags.args);
          const timeoutMs = parseDuration('--timeout', flags.timeout, 1);
          const client = await context.session(command).client();
          const result = await client.query(runId, name, args, { timeoutMs });
          context.io.out(
            context.flags(command).json
              ? json({ runId, query: name, result: result ?? null })
              : `${valueText(result)}\n`,
          );
          return EXIT.done;
        }),
      );

    runs
      .command('fork')
      .description('start a new run from a run’s checkpoint or journal position (docs/time-travel.md)')
      .argument('<run-id>')
      .option('--from-checkpoint <seq>', 'a checkpoint seq (see runs history)')
      .option('--from-position <n>', 'a journal position (see runs history)')
      .option('--run-id <id>', 'the new run’s id')
      .action(
        (
          runId: string,
          flags: { fromCheckpoint?: string; fromPosition?: string; runId?: string },
          command: Command,
        ) =>
          context.run(async () => {
            if ((flags.fromCheckpoint === undefined) === (flags.fromPosition === undefined))
              throw new UsageError('runs fork needs exactly one of --from-checkpoint and --from-position');
            const point =
              flags.fromCheckpoint !== undefined
                ? { fromCheckpoint: whole('--from-checkpoint', flags.fromCheckpoint) }
                : { fromJournalPosition: whole('--from-position', flags.fromPosition!) };
            const handle = await (
              await context.session(command).client()
            ).timeTravel.fork(runId, { ...point, ...(flags.runId !== undefined && { runId: flags.runId }) });
            context.io.out(
              context.flags(command).json
                ? json({ runId: handle.runId, forkedFrom: runId })
                : `forked run ${runId} as ${handle.runId}\n`,
            );
            return EXIT.done;
          }),
      );

    registerTail(runs, context);
    for (const action of BULK_RUN_ACTION_NAMES) registerAction(runs, context, action);
  },
};

/**
 * `runs cancel|retry|delete|pause|resume [run-id] [filters] [--all] [--yes]`: one run by id, or every run the
 * filters match (a dry run unless --yes).
 */
function registerAction(runs: Command, context: CommandContext, action: BulkRunActionName): void {
  const spec: BulkRunAction = BULK_RUN_ACTIONS[action];
  const command = runs
    .command(action)
    .description(
      `${spec.description}: one run by id, or in bulk every run the filters match ` +
        `(without --status: runs that are ${spec.statuses.join(', ')})`,
    )
    .argument('[run-id]')
    .option('--all', 'every run the action takes (no other filter)')
    .option('--yes', 'act on the runs the filters match (without it, only count them)')
    .option('--concurrency <n>', 'runs acted on at once in bulk, 1-64 (default 8)');
  if (action === 'cancel' || action === 'pause')
    command.option('--reason <text>', 'why, recorded on the run');
  addFilterFlags(command, false).action(
    (
      runId: string | undefined,
      flags: FilterFlags & { all?: boolean; yes?: boolean; concurrency?: string; reason?: string },
      cmd: Command,
    ) =>
      context.run(async () => {
        const filtered = hasFilter(flags) || flags.all === true;
        if (runId !== undefined && filtered)
          throw new UsageError(`runs ${action} takes a run id or filters, not both`);
        if (runId === undefined && !filtered)
          throw new UsageError(
            `runs ${action} needs a run id, or filters (--status, --workflow, …), or --all`,
          );
        const client = await context.session(cmd).client();
        if (runId !== undefined) return one(context, cmd, client, action, runId, flags.reason);
        return bulk(context, cmd, client, action, flags);
      }),
  );
}

async function one(
  context: CommandContext,
  cmd: Command,
  client: Client,
  action: BulkRunActionName,
  runId: string,
  reason: string | undefined,
): Promise<ExitCode> {
  const spec: BulkRunAction = BULK_RUN_ACTIONS[action];
  const run = await described(client, runId);
  const asJson = context.flags(cmd).json === true;
  if (action === 'pause' || action === 'resume')
    return pauseOrResume(context, client, action, run, reason, asJson);
  if (!spec.statuses.includes(run.status))
    throw new RefusedError(
      `runs ${action} ${runId}: ${action} takes runs that are ${spec.statuses.join(', ')}, and this one is ${run.status}; nothing was changed`,
    );
  const listed = { ...run, owner: run.lease?.owner ?? null, epoch: run.lease?.epoch ?? 0 };
  await spec.act(client, listed, reason !== undefined ? { reason } : {});
  context.io.out(
    context.flags(cmd).json ? json({ runId, action, done: true }) : `${spec.done}: run ${runId}\n`,
  );
  return EXIT.done;
}

/**
 * `runs pause|resume <id>`: says what happened (paused at once, or asked to pause at its next step;
 * resumed, or a pause not reached yet withdrawn). A resume of a run that is neither paused nor asked
 * to pause is refused, nothing changed.
 */
async function pauseOrResume(
  context: CommandContext,
  client: Client,
  action: 'pause' | 'resume',
  run: RunDescription,
  reason: string | undefined,
  asJson: boolean,
): Promise<ExitCode> {
  const { runId } = run;
  let outcome: string;
  if (action === 'pause') {
    const state = await client.runs.pause(runId, reason);
    outcome =
      state === 'paused'
        ? 'paused'
        : 'pause requested: its worker stops after the activities in flight, then it is paused';
  } else {
    const wasRequested = run.status !== 'paused' && run.lease?.pauseRequested === true;
    if (!(await client.runs.resume(runId)))
      throw new RefusedError(
        `runs resume ${runId}: the run is ${run.status} and neither paused nor asked to pause; nothing was changed`,
      );
    outcome = wasRequested
      ? 'pause request withdrawn'
      : 'resumed: a worker takes it from its last journaled step';
  }
  context.io.out(asJson ? json({ runId, action, done: true, outcome }) : `run ${runId}: ${outcome}\n`);
  return EXIT.done;
}

async function bulk(
  context: CommandContext,
  cmd: Command,
  client: Client,
  action: BulkRunActionName,
  flags: FilterFlags & { yes?: boolean; concurrency?: string; reason?: string },
): Promise<ExitCode> {
  const filter = filterFromFlags(flags);
  const matched = await client.bulk.count(filter, action);
  const asJson = context.flags(cmd).json === true;
  if (flags.yes !== true) {
    context.io.out(
      asJson
        ? json({ action, matched, dryRun: true })
        : `${matched} run(s) match; nothing done (dry run). Add --yes to ${action} them.\n`,
    );
    return EXIT.done;
  }
  context.io.err(`${action}: ${matched} run(s) match\n`);
  const summary = await client.bulk.run(action, filter, {
    onProgress: bulkProgress(context.io, action, matched),
    signal: context.interrupt,
    ...(flags.concurrency !== undefined && { concurrency: whole('--concurrency', flags.concurrency) }),
    ...(flags.reason !== undefined && { reason: flags.reason }),
  });
  context.io.out(asJson ? json(summary) : summaryText(summary));
  return bulkExit(context.io, summary, matched, 'run');
}

/** What `runs count` prints: the total, and by status where the store keeps counts. */
interface CountedRuns {
  total: number;
  byStatus?: Record<string, number>;
}

/**
 * The counts of `filter`: kept counts for no filter or one keyword or boolean attribute
 * (client.runs.count), else the runs it matches counted page by page (client.bulk.count).
 */
async function countRuns(client: Client, filter: RunFilter): Promise<CountedRuns> {
  const given = Object.keys(filter);
  if (given.length === 0 || (given.length === 1 && given[0] === 'attributes')) {
    try {
      const { total, byStatus } = await client.runs.count(filter);
      return { total, byStatus };
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
    }
  }
  return { total: await client.bulk.count(filter) };
}

function countsText({ total, byStatus }: CountedRuns): string {
  const rows: [string, number][] = Object.entries(byStatus ?? {}).filter(([, n]) => n > 0);
  return `${fieldTable([...rows, ['total', total]])}\n`;
}

/** Child workflows `runs describe` lists. */
const CHILDREN_SHOWN = 100;

type UpdateItem = Extract<TimelineItem, { kind: 'update' }>;

/** A run's updates accepted and not answered yet, or why its journal could not be read. */
interface UpdatesUnderWay {
  underWay?: UpdateItem[];
  unreadable?: string;
}

/**
 * The updates the run accepted and has not answered (their handlers still running, or the run
 * suspended or held by a dead worker meanwhile), from its timeline. A journal this CLI has no key
 * for is said so, not an error: the rest of the describe stands.
 */
async function updatesUnderWay(client: Client, runId: string): Promise<UpdatesUnderWay> {
  try {
    const timeline = await client.runs.timeline(runId);
    return {
      underWay: timeline.items.filter(
        (item): item is UpdateItem => item.kind === 'update' && item.outcome === 'accepted',
      ),
    };
  } catch (err) {
    if (err instanceof CheckpointIntegrityError) return { unreadable: err.message };
    throw err;
  }
}

function describeText(
  run: RunDescription,
  children: { runId: string; workflow: string; status: string }[],
  updates: UpdatesUnderWay,
  wide: boolean,
): string {
  const rows: [string, string | number][] = [
    ['run id', run.runId],
    ['workflow', `${run.workflow}@${run.version}`],
    ['status', run.status],
    ['created', time(run.createdAt)],
    ['updated', time(run.updatedAt)],
    ['claims', run.attempts],
    ['idempotency key', run.idempotencyKey ?? '-'],
    ['input', valueText(run.input)],
  ];
  if (run.result !== undefined) rows.push(['result', valueText(run.result)]);
  if (run.error !== undefined) rows.push(['error', `${run.error.name}: ${run.error.message}`]);
  if (run.forkedFrom !== undefined) rows.push(['forked from', JSON.stringify(run.forkedFrom)]);
  // Search attributes (docs/search-attributes.md), one row each: name = value (type).
  for (const [name, attribute] of Object.entries(run.attributes ?? {}))
    rows.push([`attribute ${name}`, `${attributeText(attribute)} (${attribute.type})`]);
  if (run.parent !== undefined) rows.push(['parent', `${run.parent.runId} (step #${run.parent.seq})`]);
  for (const child of children) rows.push(['child', `${child.runId} (${child.workflow}, ${child.status})`]);
  if (children.length === CHILDREN_SHOWN) rows.push(['children', `the first ${CHILDREN_SHOWN} shown`]);
  if (run.lease !== undefined) {
    rows.push(['lease', `${run.lease.state}, epoch ${run.lease.epoch}, owner ${run.lease.owner ?? '-'}`]);
    if (run.lease.expiresAt !== null) rows.push(['lease expires', time(run.lease.expiresAt)]);
    if (run.lease.cancelRequested) rows.push(['cancel requested', run.lease.cancelReason ?? 'yes']);
    if (run.lease.pauseRequested === true) rows.push(['pause requested', run.lease.pauseReason ?? 'yes']);
    else if (run.lease.state === 'paused') rows.push(['paused', run.lease.pauseReason ?? 'yes']);
  }
  for (const u of updates.underWay ?? [])
    rows.push([
      'update under way',
      `'${u.name}' (id ${u.updateId}) accepted ${time(u.at)}, args ${u.args ?? '-'}`,
    ]);
  if (updates.unreadable !== undefined) rows.push(['updates', `journal unreadable: ${updates.unreadable}`]);
  return `${fieldTable(rows, wide)}\n`;
}

function whole(flag: string, value: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} '${value}' is not a whole number`);
  return Number(value);
}

/** `--priority`, checked before any connection (a usage error naming the levels). */
function priorityFlag(value: string | undefined): RunPriority | undefined {
  if (value === undefined) return undefined;
  if ((RUN_PRIORITIES as readonly string[]).includes(value)) return value as RunPriority;
  throw new UsageError(`--priority '${value}' is not a run priority; use ${RUN_PRIORITIES.join(', ')}`);
}
