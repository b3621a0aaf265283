/**
 * Schedule arithmetic, with no I/O (docs/schedules.md): reading a {@link ScheduleSpec}, the due
 * times it yields, each due time's jitter and run identity, and {@link planFiring}, the decision a
 * worker takes for a due schedule. The worker fires, the client creates and updates; both compute
 * due times here, so they agree. The checks of a schedule, its id, a listing and a due limit are
 * here too; `checkedStore` (checked-store.ts) makes them before a store adapter is asked.
 *
 * Invariants:
 * 1. A due time's run id and idempotency key depend only on the schedule id, the workflow and the
 *    due time: a firing repeated after a crash starts the same run.
 * 2. A due time's jitter depends only on the schedule id and the due time.
 * 3. planFiring never fires a due time after a later one, and fires each at most once per plan.
 */
import { createHash } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import { cronDueTimes } from './cron-due-times.js';
import { ConfigError } from '../shared/errors.js';
import { runIdForKey } from '../shared/ids.js';
import type {
  CatchupPolicy,
  OverlapPolicy,
  ScheduleDefinition,
  ScheduleQuery,
  ScheduleRecord,
  ScheduleSpec,
  ScheduleState,
  NewSchedule,
} from './contracts/schedules.js';
import { DEFAULT_SCHEDULE_PAGE, MAX_SCHEDULE_PAGE } from './contracts/schedules.js';

/** Schedule ids: they become part of idempotency keys, CLI arguments and store keys. */
export const SCHEDULE_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;
/** The shortest interval of an `everyMs` schedule. */
export const MIN_SCHEDULE_INTERVAL_MS = 1_000;
export const DEFAULT_CATCHUP: CatchupPolicy = { missed: 'skip', limit: 1, graceMs: 60_000 };
export const OVERLAP_POLICIES: readonly OverlapPolicy[] = ['skip', 'queue-one', 'allow'];
/**
 * Due times one plan walks forward at most: past it (a per-second cron after days of downtime) the
 * plan takes the due times just before now instead, the only ones a catch-up may still run.
 */
const MAX_WALK = 1_000;

function fail(message: string): never {
  throw new ConfigError(message);
}

/** Throws ConfigError unless `id` is a valid schedule id. */
export function assertScheduleId(id: string): void {
  if (typeof id !== 'string' || !SCHEDULE_ID_PATTERN.test(id)) {
    fail(
      `schedule id '${String(id)}' is invalid: use 1-128 characters from letters, digits, '_', '-', '.' and ':'`,
    );
  }
}

/** True when `timeZone` is an IANA time zone this Node.js knows. */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The spec, checked: a cron expression that parses in a known time zone, or a whole interval of at
 * least {@link MIN_SCHEDULE_INTERVAL_MS}. ConfigError otherwise, saying what is wrong.
 */
export function checkScheduleSpec(spec: ScheduleSpec): ScheduleSpec {
  if (spec === null || typeof spec !== 'object')
    fail('schedule spec: give { cron, timeZone? } or { everyMs }');
  if ('cron' in spec && spec.cron !== undefined) {
    if ('everyMs' in spec) fail('schedule spec: give either cron or everyMs, not both');
    const timeZone = spec.timeZone ?? 'UTC';
    if (typeof spec.cron !== 'string' || spec.cron.trim() === '') fail('schedule spec: cron is empty');
    if (typeof timeZone !== 'string' || !isKnownTimeZone(timeZone)) {
      fail(
        `schedule spec: time zone '${String(timeZone)}' is unknown; give an IANA name such as 'Europe/Paris' or 'UTC'`,
      );
    }
    try {
      CronExpressionParser.parse(spec.cron, { tz: timeZone, strict: false }).next();
    } catch (err) {
      fail(
        `schedule spec: cron expression '${spec.cron}' is invalid (${err instanceof Error ? err.message : String(err)}); ` +
          "use 5 fields 'minute hour day month weekday' or 6 with seconds first",
      );
    }
    return { cron: spec.cron.trim(), timeZone };
  }
  if ('everyMs' in spec) {
    const every = spec.everyMs;
    if (!Number.isInteger(every) || every < MIN_SCHEDULE_INTERVAL_MS) {
      fail(
        `schedule spec: everyMs is ${String(every)}; give a whole number of ms, ${MIN_SCHEDULE_INTERVAL_MS} or more`,
      );
    }
    return { everyMs: every };
  }
  return fail('schedule spec: give { cron, timeZone? } or { everyMs }');
}

/**
 * The due times strictly after `after`, in order, one per call; null once there are no more.
 * A cron's are read in its zone by cronDueTimes (its module states the daylight-saving rule).
 */
export function dueTimesAfter(spec: ScheduleSpec, after: number): () => number | null {
  if ('everyMs' in spec) {
    let at = after;
    return () => (at = (Math.floor(at / spec.everyMs) + 1) * spec.everyMs);
  }
  try {
    return cronDueTimes(spec.cron, spec.timeZone ?? 'UTC', after, 'forward');
  } catch {
    return () => null;
  }
}

/** Due times at or before `atOrBefore`, latest first, one per call; null once there are no more. */
function dueTimesBefore(spec: ScheduleSpec, atOrBefore: number): () => number | null {
  if ('everyMs' in spec) {
    let at = Math.floor(atOrBefore / spec.everyMs) * spec.everyMs + spec.everyMs;
    return () => (at -= spec.everyMs);
  }
  try {
    return cronDueTimes(spec.cron, spec.timeZone ?? 'UTC', atOrBefore, 'backward');
  } catch {
    return () => null;
  }
}

/**
 * The schedule's due times whose moment (jitter included) has come by `now`, oldest first, and its
 * first due time after them. Fired in order: a due time whose jitter is not over holds back later
 * ones. Past {@link MAX_WALK} due times, the middle of a long downtime is left out: only the latest
 * `catchup.limit` missed due times and those within the grace can still start a run.
 */
function dueTimes(schedule: ScheduleRecord, now: number): { due: number[]; nextDueAt: number | null } {
  const due: number[] = [];
  let next = schedule.nextDueAt;
  if (next === null) return { due, nextDueAt: null };
  let after = dueTimesAfter(schedule.spec, next);
  let walked = 0;
  while (next !== null && fireTimeOf(schedule, next) <= now) {
    due.push(next);
    walked += 1;
    if (walked === MAX_WALK) {
      // Far behind: the latest due times before the last moment every jitter is surely over.
      const surelyDue = now - schedule.jitterMs;
      const previous = dueTimesBefore(schedule.spec, surelyDue);
      const tail: number[] = [];
      let missed = 0;
      for (let d = previous(); d !== null && d > next; d = previous()) {
        tail.push(d);
        if (now - fireTimeOf(schedule, d) > schedule.catchup.graceMs) missed += 1;
        if (missed >= schedule.catchup.limit || tail.length >= MAX_WALK) break;
      }
      if (tail.length > 0) {
        due.push(...tail.reverse());
        next = tail.at(-1)!;
        after = dueTimesAfter(schedule.spec, next);
      }
    }
    next = after();
  }
  return { due, nextDueAt: next };
}

/** The first due time strictly after `after` (ms), or null when the spec falls due no more. */
export function nextDueAfter(spec: ScheduleSpec, after: number): number | null {
  return dueTimesAfter(spec, after)();
}

/** The due time's jitter (ms, 0 to `jitterMs`), fixed per schedule and due time. */
export function jitterFor(scheduleId: string, dueAt: number, jitterMs: number): number {
  if (jitterMs <= 0) return 0;
  const digest = createHash('sha256').update(`${scheduleId}\0${dueAt}`).digest();
  return digest.readUInt32BE(0) % (jitterMs + 1);
}

/** When the run of due time `dueAt` starts: the due time plus its jitter. */
export function fireTimeOf(
  schedule: Pick<ScheduleDefinition, 'scheduleId' | 'jitterMs'>,
  dueAt: number,
): number {
  return dueAt + jitterFor(schedule.scheduleId, dueAt, schedule.jitterMs);
}

/** The idempotency key of a due time's run: `schedule:<id>:<due time, ISO 8601>`. */
export function scheduleRunKey(scheduleId: string, dueAt: number): string {
  return `schedule:${scheduleId}:${new Date(dueAt).toISOString()}`;
}

/** The run id of a due time's run (what `client.start` derives from the same key). */
export function scheduleRunId(
  schedule: Pick<ScheduleDefinition, 'scheduleId' | 'workflow'>,
  dueAt: number,
): string {
  return runIdForKey(schedule.workflow, scheduleRunKey(schedule.scheduleId, dueAt));
}

/** The state of a schedule that carries on from `now`: its next due time after now, nothing queued. */
export function freshState(
  definition: ScheduleDefinition,
  now: number,
  last?: Partial<ScheduleState>,
): ScheduleState {
  const nextDueAt = nextDueAfter(definition.spec, now);
  return {
    nextDueAt,
    nextFireAt: nextDueAt === null ? null : fireTimeOf(definition, nextDueAt),
    queuedDueAt: null,
    lastDueAt: last?.lastDueAt ?? null,
    lastRunId: last?.lastRunId ?? null,
  };
}

/** How the previous run stands, as the firing worker found it. */
export type PreviousRun = 'none' | 'running' | 'finished';

/** One due time a plan starts a run for. */
export interface PlannedRun {
  dueAt: number;
  runId: string;
  idempotencyKey: string;
}

/** What {@link planFiring} decided. */
export interface FiringPlan {
  /** Runs to start, oldest due time first. */
  fire: PlannedRun[];
  /** Due times that start no run: missed (catch-up `skip`, or past its limit) or overlapping. */
  skipped: { dueAt: number; reason: 'missed' | 'overlap' }[];
  /** The state to write (compare-and-set) once the runs are started. */
  next: ScheduleState;
}

/**
 * Decides what a due schedule does at `now` (store clock): which due times start a run and what
 * its state becomes. `previous` is how the run of `lastRunId` stands (ignored when overlap is
 * `allow`). `recheckMs` is how soon a queued due time is looked at again.
 */
export function planFiring(
  schedule: ScheduleRecord,
  now: number,
  previous: PreviousRun,
  recheckMs: number,
): FiringPlan {
  const fire: PlannedRun[] = [];
  const skipped: FiringPlan['skipped'] = [];
  let { queuedDueAt, lastDueAt, lastRunId } = schedule;
  let running = schedule.overlap !== 'allow' && previous === 'running';
  const start = (dueAt: number): void => {
    const runId = scheduleRunId(schedule, dueAt);
    fire.push({ dueAt, runId, idempotencyKey: scheduleRunKey(schedule.scheduleId, dueAt) });
    lastDueAt = dueAt;
    lastRunId = runId;
    running = schedule.overlap !== 'allow';
  };
  // A due time queued behind the previous run goes first, once that run is over.
  if (queuedDueAt !== null && !running) {
    start(queuedDueAt);
    queuedDueAt = null;
  }
  // The due times whose moment (jitter included) has come, oldest first.
  const { due, nextDueAt } = dueTimes(schedule, now);
  // On time: found within the grace; missed: later than that.
  const onTime = due.filter((dueAt) => now - fireTimeOf(schedule, dueAt) <= schedule.catchup.graceMs);
  const missed = due.filter((dueAt) => now - fireTimeOf(schedule, dueAt) > schedule.catchup.graceMs);
  const catchUp = schedule.catchup.missed === 'run' ? missed.slice(-schedule.catchup.limit) : [];
  for (const dueAt of missed) if (!catchUp.includes(dueAt)) skipped.push({ dueAt, reason: 'missed' });
  for (const dueAt of [...catchUp, ...onTime]) {
    if (!running) start(dueAt);
    else if (schedule.overlap === 'queue-one' && queuedDueAt === null) queuedDueAt = dueAt;
    else skipped.push({ dueAt, reason: 'overlap' });
  }
  const fireAt = nextDueAt === null ? null : fireTimeOf(schedule, nextDueAt);
  const recheckAt = queuedDueAt === null ? null : now + recheckMs;
  const nextFireAt = fireAt === null ? recheckAt : recheckAt === null ? fireAt : Math.min(fireAt, recheckAt);
  return { fire, skipped, next: { nextDueAt, nextFireAt, queuedDueAt, lastDueAt, lastRunId } };
}

/** Throws ConfigError naming the field unless `policy` is a whole {@link CatchupPolicy}. */
export function checkCatchupPolicy(policy: CatchupPolicy): CatchupPolicy {
  if (policy === null || typeof policy !== 'object')
    fail('schedule catchup: give { missed, limit, graceMs }');
  if (policy.missed !== 'skip' && policy.missed !== 'run') {
    fail(`schedule catchup.missed is '${String(policy.missed)}'; give 'skip' or 'run'`);
  }
  if (!Number.isInteger(policy.limit) || policy.limit < 1) {
    fail(`schedule catchup.limit is ${String(policy.limit)}; give a whole number, 1 or more`);
  }
  if (!Number.isInteger(policy.graceMs) || policy.graceMs < 0) {
    fail(`schedule catchup.graceMs is ${String(policy.graceMs)}; give a whole number of ms, 0 or more`);
  }
  return { missed: policy.missed, limit: policy.limit, graceMs: policy.graceMs };
}

function nullableTime(name: string, value: number | null): number | null {
  if (value === null) return null;
  if (!Number.isFinite(value)) fail(`schedule ${name} is ${String(value)}; give a time in ms or null`);
  return value;
}

/**
 * A schedule as a store takes it: every field checked (ConfigError naming the field, nothing
 * written), unknown fields dropped.
 */
export function checkNewSchedule(schedule: NewSchedule): NewSchedule {
  if (schedule === null || typeof schedule !== 'object') fail('schedule: give a schedule record');
  assertScheduleId(schedule.scheduleId);
  if (typeof schedule.workflow !== 'string' || schedule.workflow === '') fail('schedule workflow is empty');
  if (!Number.isInteger(schedule.version) || schedule.version < 1) {
    fail(`schedule version is ${String(schedule.version)}; give a whole number, 1 or more`);
  }
  if (!OVERLAP_POLICIES.includes(schedule.overlap)) {
    fail(`schedule overlap is '${String(schedule.overlap)}'; give one of ${OVERLAP_POLICIES.join(', ')}`);
  }
  if (!Number.isInteger(schedule.jitterMs) || schedule.jitterMs < 0) {
    fail(`schedule jitterMs is ${String(schedule.jitterMs)}; give a whole number of ms, 0 or more`);
  }
  if (typeof schedule.paused !== 'boolean') fail('schedule paused must be true or false');
  if (schedule.note !== undefined && typeof schedule.note !== 'string') fail('schedule note must be text');
  if (schedule.lastRunId !== null && typeof schedule.lastRunId !== 'string') {
    fail('schedule lastRunId must be a run id or null');
  }
  return {
    scheduleId: schedule.scheduleId,
    workflow: schedule.workflow,
    version: schedule.version,
    input: schedule.input === undefined ? null : schedule.input,
    spec: checkScheduleSpec(schedule.spec),
    catchup: checkCatchupPolicy(schedule.catchup),
    overlap: schedule.overlap,
    jitterMs: schedule.jitterMs,
    paused: schedule.paused,
    ...(schedule.note !== undefined && { note: schedule.note }),
    nextDueAt: nullableTime('nextDueAt', schedule.nextDueAt),
    nextFireAt: nullableTime('nextFireAt', schedule.nextFireAt),
    queuedDueAt: nullableTime('queuedDueAt', schedule.queuedDueAt),
    lastDueAt: nullableTime('lastDueAt', schedule.lastDueAt),
    lastRunId: schedule.lastRunId,
  };
}

/** A listing's query, checked, with its defaults. */
export function checkScheduleQuery(
  query: ScheduleQuery = {},
): Required<Pick<ScheduleQuery, 'limit'>> & ScheduleQuery {
  const limit = query.limit ?? DEFAULT_SCHEDULE_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SCHEDULE_PAGE) {
    fail(`schedule query: limit is ${String(limit)}; give a whole number from 1 to ${MAX_SCHEDULE_PAGE}`);
  }
  if (query.paused !== undefined && typeof query.paused !== 'boolean')
    fail('schedule query: paused must be true or false');
  if (query.cursor !== undefined) assertScheduleId(query.cursor);
  return { ...query, limit };
}

/** Throws ConfigError unless `limit` is a whole number ≥ 1 (schedules.due). */
export function checkDueLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1)
    fail(`schedules.due: limit is ${String(limit)}; give a whole number, 1 or more`);
  return limit;
}
