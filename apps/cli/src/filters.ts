/**
 * The run filter flags, named after the RunQuery fields, and their parsing. Values are checked
 * here for form (a number, a time, a known order); the store checks the rest (known statuses,
 * ranges) and its ConfigError names the field, so nothing is checked twice differently.
 */
import { parseAttributeFilter, type RunFilter, type RunQuery, type RunStatus } from '@baton/client';
import { toMs } from '@baton/core';
import type { Command } from 'commander';
import { UsageError } from './errors.js';

/** The filter flags as commander gives them (all strings). */
export interface FilterFlags {
  status?: string;
  workflow?: string;
  version?: string;
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  updatedBefore?: string;
  runIdPrefix?: string;
  keyPrefix?: string;
  worker?: string;
  /** `--attr` expressions, one per flag given (repeatable). */
  attr?: string[];
  order?: string;
  limit?: string;
  cursor?: string;
}

/** Adds the filter flags (and, with `paging`, --order, --limit and --cursor) to a command. */
export function addFilterFlags(command: Command, paging: boolean): Command {
  command
    .option(
      '--status <statuses>',
      'pending, running, suspended, completed, failed, cancelled; several comma-separated',
    )
    .option('--workflow <name>', 'exact workflow name')
    .option('--version <n>', 'exact workflow version')
    .option(
      '--created-after <time>',
      'created at or after (ISO time, ms since epoch, or an age: a duration like 2h or 30m)',
    )
    .option('--created-before <time>', 'created before (same forms)')
    .option('--updated-after <time>', 'last changed at or after (same forms)')
    .option('--updated-before <time>', 'last changed before (same forms)')
    .option('--run-id-prefix <prefix>', 'the run id starts with this')
    .option('--key-prefix <prefix>', 'the idempotency key starts with this')
    .option('--worker <id>', 'the worker holding the run now')
    .option(
      '--attr <expression>',
      'a search attribute: name=value (a keyword), name:number=42, name:boolean=true, ' +
        'name:time=<ISO>, or a range name>=10 (also >, <=, <); repeat for more (docs/search-attributes.md)',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    );
  if (paging) {
    command
      .option('--order <order>', 'newest (default) or oldest first')
      .option('--limit <n>', 'runs per page, 1-1000 (default 50)')
      .option('--cursor <cursor>', 'the cursor a previous page printed, to get the next');
  }
  return command;
}

/** The filter flags (not paging), as commander names them. */
const FILTER_KEYS = [
  'status',
  'workflow',
  'version',
  'createdAfter',
  'createdBefore',
  'updatedAfter',
  'updatedBefore',
  'runIdPrefix',
  'keyPrefix',
  'worker',
  'attr',
] as const satisfies readonly (keyof FilterFlags)[];

/** True when any filter flag (not paging, not another option of the command) was given. */
export function hasFilter(flags: FilterFlags): boolean {
  return FILTER_KEYS.some((key) => flags[key] !== undefined);
}

/**
 * A time flag: ms since epoch, an ISO 8601 time, or an age before `now` written as the API writes
 * a Duration (`90s`, `15m`, `2h`, `1.5h`, `7d`). UsageError names the flag otherwise.
 */
export function parseTime(flag: string, value: string, now: number = Date.now()): number {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const age = ageOf(text);
  if (age !== undefined) return now - age;
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed)) {
    throw new UsageError(
      `${flag} '${value}' is not a time; give an ISO time (2026-11-25T10:00:00Z), ms since epoch, or an age (30m, 2h, 7d)`,
    );
  }
  return parsed;
}

/** The milliseconds of an age written as a Duration (`2h`), or undefined for anything else. */
function ageOf(text: string): number | undefined {
  try {
    return toMs(text);
  } catch {
    return undefined;
  }
}

function parseWhole(flag: string, value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`${flag} '${value}' is not a whole number`);
  return Number(value.trim());
}

/** The RunFilter the flags describe (paging flags ignored). */
export function filterFromFlags(flags: FilterFlags, now: number = Date.now()): RunFilter {
  const filter: RunFilter = {};
  if (flags.status !== undefined) {
    const statuses = flags.status
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0) as RunStatus[];
    if (statuses.length === 0) throw new UsageError(`--status '${flags.status}' names no status`);
    filter.status = statuses.length === 1 ? statuses[0] : statuses;
  }
  if (flags.workflow !== undefined) filter.workflow = flags.workflow;
  if (flags.version !== undefined) filter.version = parseWhole('--version', flags.version);
  if (flags.createdAfter !== undefined)
    filter.createdAfter = parseTime('--created-after', flags.createdAfter, now);
  if (flags.createdBefore !== undefined)
    filter.createdBefore = parseTime('--created-before', flags.createdBefore, now);
  if (flags.updatedAfter !== undefined)
    filter.updatedAfter = parseTime('--updated-after', flags.updatedAfter, now);
  if (flags.updatedBefore !== undefined)
    filter.updatedBefore = parseTime('--updated-before', flags.updatedBefore, now);
  if (flags.runIdPrefix !== undefined) filter.runIdPrefix = flags.runIdPrefix;
  if (flags.keyPrefix !== undefined) filter.idempotencyKeyPrefix = flags.keyPrefix;
  if (flags.worker !== undefined) filter.worker = flags.worker;
  if (flags.attr !== undefined && flags.attr.length > 0) {
    try {
      filter.attributes = parseAttributeFilter(flags.attr);
    } catch (err) {
      throw new UsageError(`--attr: ${(err as Error).message}`);
    }
  }
  return filter;
}

/** The RunQuery the flags describe: the filter, and --order, --limit, --cursor. */
export function queryFromFlags(flags: FilterFlags, now: number = Date.now()): RunQuery {
  const query: RunQuery = filterFromFlags(flags, now);
  if (flags.order !== undefined) {
    if (flags.order !== 'newest' && flags.order !== 'oldest')
      throw new UsageError(`--order '${flags.order}' is not an order; use newest or oldest`);
    query.order = flags.order;
  }
  if (flags.limit !== undefined) query.limit = parseWhole('--limit', flags.limit);
  if (flags.cursor !== undefined) query.cursor = flags.cursor;
  return query;
}
