/**
 * `baton replay-check --workflows <module> [filters]`: before a rollout, replays the journals of the
 * runs in flight (or those the filters select) against the workflow modules of the NEW code and
 * lists every run a worker on that code could not resume (client.fleet.replayCheck, docs/versioning.md,
 * "Check before you roll out"). Nothing is written and no activity runs.
 *
 * Exit code: 0 when every run checked is ok or skipped, 1 when any is nondeterministic, fails
 * during the replay or could not be checked, 2 for a usage mistake (a module that does not load),
 * 130 when Ctrl-C stopped the check (the check rejects with the abort; runCli reports it).
 */
import { IN_FLIGHT_STATUSES, type ReplayCheckReport, type ReplayCheckRun } from '@baton/client';
import { loadWorkflows } from '@baton/host';
import type { Command } from 'commander';
import type { CommandGroup } from '../command.js';
import { EXIT, UsageError } from '../errors.js';
import { addFilterFlags, filterFromFlags, type FilterFlags } from '../filters.js';
import { json, RUN_ID } from '../output.js';
import { listTable } from '../table.js';

interface ReplayCheckFlags extends FilterFlags {
  workflows?: string[];
  maxRuns?: string;
  concurrency?: string;
  all?: boolean;
}

/** Why a run is not ok, in one line; for an ok run, where its replay stopped. */
export function replayDetail(run: ReplayCheckRun): string {
  switch (run.result) {
    case 'ok':
      return run.reached === 'completed'
        ? `replays to the workflow's end (${run.journalSteps} steps)`
        : `${run.journalSteps} steps replayed; ${run.reached === 'waiting' ? 'waits' : 'goes on live'} at step #${run.nextSeq ?? '?'}`;
    case 'nondeterministic':
      return `step #${run.seq}: the journal has ${run.expected}, the new code asks for ${run.found}`;
    case 'failed':
      return `the new code throws: ${run.error.name}: ${run.error.message}`;
    case 'skipped':
      return run.reason;
    case 'error':
      return `cannot check: ${run.error.code ?? run.error.name}: ${run.error.message}`;
  }
}

/** The report as text: a table of the runs (the ok ones only with `all`), then the counts. */
export function replayCheckText(report: ReplayCheckReport, all: boolean, wide = false): string {
  const shown = all ? report.runs : report.runs.filter((r) => r.result !== 'ok');
  const { counts } = report;
  const summary =
    `${counts.checked} run(s) checked: ${counts.ok} ok, ${counts.nondeterministic} nondeterministic, ` +
    `${counts.failed} failed, ${counts.skipped} skipped, ${counts.error} not checkable` +
    (report.truncated ? ' (stopped at --max-runs; more runs match)' : '');
  if (shown.length === 0) return `${summary}\n`;
  const rows = shown.map((r) => [r.runId, `${r.workflow}@${r.version}`, r.status, r.result, replayDetail(r)]);
  const columns = [
    RUN_ID,
    { head: 'workflow', shorten: 'end' },
    { head: 'status', wideOnly: true },
    'result',
    { head: 'detail', shorten: 'end', min: 24 },
  ] as const;
  return `${listTable(columns, rows, wide)}\n${summary}\n`;
}

function whole(flag: string, value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1)
    throw new UsageError(`${flag} '${value}' is not a whole number of at least 1`);
  return Number(value.trim());
}

export const replayCheckCommands: CommandGroup = {
  register(program, context) {
    addFilterFlags(
      program
        .command('replay-check')
        .description(
          'replay in-flight runs against new workflow code and list those a worker on it could not resume; writes nothing',
        )
        .option(
          '--workflows <module>',
          'a workflow module of the new code (built JavaScript, as BATON_WORKFLOWS), repeatable',
          (value: string, previous: string[] = []) => [...previous, value],
        )
        .option('--max-runs <n>', 'check at most this many runs')
        .option('--concurrency <n>', 'runs replayed at a time (default 4)')
        .option('--all', 'list the ok runs too'),
      false,
    ).action((flags: ReplayCheckFlags, command: Command) =>
      context.run(async () => {
        if (flags.workflows === undefined || flags.workflows.length === 0)
          throw new UsageError('replay-check needs --workflows <module> (the new code), once per module');
        const workflows = await loadWorkflows(flags.workflows, process.cwd(), '--workflows');
        const filter = { status: IN_FLIGHT_STATUSES, ...filterFromFlags(flags) };
        const client = await context.session(command).client();
        const asJson = context.flags(command).json === true;
        const report = await client.fleet.replayCheck({
          workflows,
          filter,
          ...(flags.maxRuns !== undefined && { maxRuns: whole('--max-runs', flags.maxRuns) }),
          ...(flags.concurrency !== undefined && { concurrency: whole('--concurrency', flags.concurrency) }),
          signal: context.interrupt,
          onProgress: ({ counts }) => {
            if (counts.checked % 500 === 0) context.io.err(`${counts.checked} runs checked\n`);
          },
        });
        context.io.out(
          asJson ? json(report) : replayCheckText(report, flags.all === true, context.flags(command).wide),
        );
        const broken = report.counts.nondeterministic + report.counts.failed + report.counts.error;
        return broken > 0 ? EXIT.refused : EXIT.done;
      }),
    );
  },
};
