/**
 * ScheduleStore on Redis (`store.schedules`): each schedule in a hash (`sched:<id>`: revision, stamps, the fields the
 * scans filter on, and the schedule as JSON), every id in `sched-ids` (all scored 0, so a listing
 * walks ids bytewise with ZRANGEBYLEX) and every schedule that is not paused and has a next firing
 * in `sched-due` (id -> nextFireAt, the due scan's queue). One script per operation keeps the
 * hash and both sets in step and makes each write a compare-and-set on the revision; the due scan
 * compares with the server's clock. Only commands the README's ACL already lists.
 */
import type {
  CheckedScheduleQuery,
  NewSchedule,
  OperationsOf,
  SchedulePage,
  ScheduleRecord,
  ScheduleWrite,
  StoreAdapter,
} from '@baton/core/adapter';
import { CodecError } from '@baton/core';
import { str, type StoreContext } from './context.js';

function keys(ctx: StoreContext, scheduleId: string): string[] {
  return [ctx.keys.schedule(scheduleId), ctx.keys.scheduleIds, ctx.keys.schedulesDue];
}

/** A schedule from a reply's id, rev, created, updated and rec elements, starting at `i`. */
function record(reply: unknown[], i: number, scheduleId: string): ScheduleRecord {
  let stored: NewSchedule;
  try {
    stored = JSON.parse(str(reply[i + 3])) as NewSchedule;
  } catch (err) {
    throw new CodecError(`redis store: schedule ${scheduleId} is not JSON`, { cause: err });
  }
  return {
    ...stored,
    scheduleId,
    revision: Number(str(reply[i])),
    createdAt: Number(str(reply[i + 1])),
    updatedAt: Number(str(reply[i + 2])),
  };
}

function writeArgs(checked: NewSchedule, expectedRevision: number | undefined): string[] {
  return [
    checked.scheduleId,
    expectedRevision === undefined ? '' : String(expectedRevision),
    checked.workflow,
    checked.paused ? '1' : '0',
    checked.nextFireAt === null ? '' : String(checked.nextFireAt),
    JSON.stringify(checked),
  ];
}

async function create(
  ctx: StoreContext,
  schedule: NewSchedule,
): Promise<{ created: boolean; schedule: ScheduleRecord }> {
  const reply = (await ctx.run(
    'put-schedule',
    keys(ctx, schedule.scheduleId),
    writeArgs(schedule, undefined),
  )) as unknown[];
  return { created: str(reply[0]) === 'created', schedule: record(reply, 1, schedule.scheduleId) };
}

function writeAnswer(reply: unknown[], scheduleId: string): ScheduleWrite {
  const status = str(reply[0]);
  if (status === 'not-found') return { ok: false, reason: 'not-found' };
  const schedule = record(reply, 1, scheduleId);
  return status === 'conflict' ? { ok: false, reason: 'conflict', schedule } : { ok: true, schedule };
}

async function update(
  ctx: StoreContext,
  scheduleId: string,
  expectedRevision: number,
  next: Omit<NewSchedule, 'scheduleId'>,
): Promise<ScheduleWrite> {
  const reply = (await ctx.run(
    'put-schedule',
    keys(ctx, scheduleId),
    writeArgs({ ...next, scheduleId }, expectedRevision),
  )) as unknown[];
  return writeAnswer(reply, scheduleId);
}

async function deleteSchedule(
  ctx: StoreContext,
  scheduleId: string,
  expectedRevision?: number,
): Promise<ScheduleWrite> {
  const reply = (await ctx.run('delete-schedule', keys(ctx, scheduleId), [
    scheduleId,
    expectedRevision === undefined ? '' : String(expectedRevision),
  ])) as unknown[];
  return writeAnswer(reply, scheduleId);
}

async function get(ctx: StoreContext, scheduleId: string): Promise<ScheduleRecord | undefined> {
  const [rev, created, updated, rec] = await ctx.redis.hmget(
    ctx.keys.schedule(scheduleId),
    'rev',
    'created',
    'updated',
    'rec',
  );
  if (rev === null || rev === undefined) return undefined;
  return record([rev, created, updated, rec], 0, scheduleId);
}

async function list(
  ctx: StoreContext,
  { limit, cursor, workflow, paused }: CheckedScheduleQuery,
): Promise<SchedulePage> {
  const reply = (await ctx.run(
    'list-schedules',
    [ctx.keys.scheduleIds],
    [ctx.keys.prefix, cursor ?? '', limit, workflow ?? '', paused === undefined ? '' : paused ? '1' : '0'],
  )) as unknown[];
  const schedules: ScheduleRecord[] = [];
  for (let i = 1; i + 4 < reply.length; i += 5) schedules.push(record(reply, i + 1, str(reply[i])));
  return str(reply[0]) === '1' ? { schedules, cursor: schedules.at(-1)!.scheduleId } : { schedules };
}

async function due(ctx: StoreContext, limit: number): Promise<{ now: number; schedules: ScheduleRecord[] }> {
  const reply = (await ctx.run(
    'due-schedules',
    [ctx.keys.schedulesDue],
    [ctx.keys.prefix, limit],
  )) as unknown[];
  const schedules: ScheduleRecord[] = [];
  for (let i = 1; i + 4 < reply.length; i += 5) schedules.push(record(reply, i + 1, str(reply[i])));
  return { now: Number(str(reply[0])), schedules };
}

/** `store.schedules` on the connection. */
export const schedules: OperationsOf<StoreContext, StoreAdapter['schedules']> = {
  create,
  get,
  update,
  delete: deleteSchedule,
  list,
  due,
};
