import { describe, expect, it } from 'vitest';
import type { ScheduleRecord, ScheduleSpec } from './contracts/schedules.js';
import {
  checkScheduleSpec,
  fireTimeOf,
  freshState,
  jitterFor,
  nextDueAfter,
  planFiring,
  scheduleRunId,
  scheduleRunKey,
} from './schedule-times.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function schedule(overrides: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    scheduleId: 'every-minute',
    workflow: 'report',
    version: 1,
    input: null,
    spec: { everyMs: MIN },
    catchup: { missed: 'skip', limit: 1, graceMs: 10_000 },
    overlap: 'allow',
    jitterMs: 0,
    paused: false,
    nextDueAt: T0,
    nextFireAt: T0,
    queuedDueAt: null,
    lastDueAt: null,
    lastRunId: null,
    revision: 1,
    createdAt: T0 - MIN,
    updatedAt: T0 - MIN,
    ...overrides,
  };
}

describe('schedule specs', () => {
  it('refuses a bad cron expression, an unknown time zone and a short interval, saying what to give', () => {
    expect(() => checkScheduleSpec({ cron: '61 * * * *' })).toThrow(
      /cron expression '61 \* \* \* \*' is invalid/,
    );
    expect(() => checkScheduleSpec({ cron: '0 * * * *', timeZone: 'Europe/Atlantis' })).toThrow(
      /time zone 'Europe\/Atlantis' is unknown; give an IANA name/,
    );
    expect(() => checkScheduleSpec({ everyMs: 500 })).toThrow(
      /everyMs is 500; give a whole number of ms, 1000 or more/,
    );
    expect(checkScheduleSpec({ cron: ' 0 2 * * * ' })).toEqual({ cron: '0 2 * * *', timeZone: 'UTC' });
  });

  it('an interval falls due on its whole multiples since the epoch', () => {
    expect(nextDueAfter({ everyMs: MIN }, T0)).toBe(T0 + MIN);
    expect(nextDueAfter({ everyMs: MIN }, T0 - 1)).toBe(T0);
    expect(nextDueAfter({ everyMs: 3_600_000 }, T0 + 1)).toBe(T0 + 3_600_000);
  });

  it('reads cron in its time zone, across a daylight-saving change', () => {
    // 02:30 in Paris every day: on 29 March 2026 02:30 does not exist (clocks go 02:00 -> 03:00).
    const spec = { cron: '30 2 * * *', timeZone: 'Europe/Paris' };
    const before = nextDueAfter(spec, Date.UTC(2026, 2, 27, 12))!;
    expect(new Date(before).toISOString()).toBe('2026-03-28T01:30:00.000Z');
    // That night it runs once, at the change (03:00 CEST), as cron does (cron-due-times.ts).
    const gap = nextDueAfter(spec, before)!;
    expect(new Date(gap).toISOString()).toBe('2026-03-29T01:00:00.000Z');
    expect(new Date(nextDueAfter(spec, gap)!).toISOString()).toBe('2026-03-30T00:30:00.000Z');
    // On 25 October 2026 02:30 happens twice (clocks go 03:00 -> 02:00): it runs once, the first time.
    const fallBack = nextDueAfter(spec, Date.UTC(2026, 9, 24, 12))!;
    expect(new Date(fallBack).toISOString()).toBe('2026-10-25T00:30:00.000Z');
    expect(new Date(nextDueAfter(spec, fallBack)!).toISOString()).toBe('2026-10-26T01:30:00.000Z');
    // 09:00 in New York is 14:00 UTC in winter and 13:00 UTC in summer.
    const ny = { cron: '0 9 * * *', timeZone: 'America/New_York' };
    expect(new Date(nextDueAfter(ny, Date.UTC(2026, 0, 10))!).toISOString()).toBe('2026-01-10T14:00:00.000Z');
    expect(new Date(nextDueAfter(ny, Date.UTC(2026, 6, 10))!).toISOString()).toBe('2026-07-10T13:00:00.000Z');
  });

  it('jitter and run identity depend only on the schedule and the due time', () => {
    expect(jitterFor('a', T0, 0)).toBe(0);
    const j = jitterFor('a', T0, 5_000);
    expect(j).toBeGreaterThanOrEqual(0);
    expect(j).toBeLessThanOrEqual(5_000);
    expect(jitterFor('a', T0, 5_000)).toBe(j);
    const spread = new Set([0, 1, 2, 3, 4, 5, 6, 7].map((i) => jitterFor('a', T0 + i * MIN, 5_000)));
    expect(spread.size).toBeGreaterThan(4);
    expect(scheduleRunKey('a', T0)).toBe('schedule:a:2026-01-01T12:00:00.000Z');
    expect(scheduleRunId(schedule(), T0)).toBe(scheduleRunId(schedule({ revision: 9 }), T0));
    expect(scheduleRunId(schedule(), T0)).not.toBe(scheduleRunId(schedule(), T0 + MIN));
  });
});

describe('planFiring', () => {
  it('fires the due time that has come and moves on to the next', () => {
    const plan = planFiring(schedule(), T0 + 300, 'none', 1_000);
    expect(plan.fire.map((r) => r.dueAt)).toEqual([T0]);
    expect(plan.fire[0]!.idempotencyKey).toBe(scheduleRunKey('every-minute', T0));
    expect(plan.next).toEqual({
      nextDueAt: T0 + MIN,
      nextFireAt: T0 + MIN,
      queuedDueAt: null,
      lastDueAt: T0,
      lastRunId: plan.fire[0]!.runId,
    });
  });

  it('fires nothing before the due time plus its jitter', () => {
    const s = schedule({ jitterMs: 30_000 });
    const at = fireTimeOf(s, T0);
    expect(planFiring(s, at - 1, 'none', 1_000).fire).toEqual([]);
    expect(planFiring(s, at, 'none', 1_000).fire.map((r) => r.dueAt)).toEqual([T0]);
    expect(planFiring(s, at, 'none', 1_000).next.nextFireAt).toBe(fireTimeOf(s, T0 + MIN));
  });

  it('after downtime, skip runs none of the missed due times, only those within the grace', () => {
    const now = T0 + 10 * MIN + 5_000;
    const plan = planFiring(schedule(), now, 'none', 1_000);
    expect(plan.fire.map((r) => r.dueAt)).toEqual([T0 + 10 * MIN]);
    expect(plan.skipped.map((s) => s.dueAt)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => T0 + i * MIN));
    expect(plan.next.nextDueAt).toBe(T0 + 11 * MIN);
  });

  it('after downtime, run starts the latest missed due times up to its limit, oldest first', () => {
    const s = schedule({ catchup: { missed: 'run', limit: 3, graceMs: 10_000 } });
    const plan = planFiring(s, T0 + 10 * MIN + 5_000, 'none', 1_000);
    expect(plan.fire.map((r) => r.dueAt)).toEqual([7, 8, 9, 10].map((i) => T0 + i * MIN));
    expect(plan.skipped.map((x) => x.dueAt)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => T0 + i * MIN));
  });

  it('walks a long downtime of a per-second cron without visiting every second', () => {
    const s = schedule({
      spec: { cron: '* * * * * *', timeZone: 'UTC' },
      catchup: { missed: 'run', limit: 2, graceMs: 0 },
    });
    const now = T0 + 30 * 86_400_000 + 500;
    const plan = planFiring(s, now, 'none', 1_000);
    expect(plan.fire.map((r) => r.dueAt)).toEqual([now - 1_500, now - 500]);
    expect(plan.next.nextDueAt).toBe(now + 500);
  });

  it('overlap skip: a due time while the previous run is running starts nothing', () => {
    const s = schedule({ overlap: 'skip', lastRunId: 'r-prev', lastDueAt: T0 - MIN });
    const plan = planFiring(s, T0 + 100, 'running', 1_000);
    expect(plan.fire).toEqual([]);
    expect(plan.skipped).toEqual([{ dueAt: T0, reason: 'overlap' }]);
    expect(plan.next).toMatchObject({ nextDueAt: T0 + MIN, lastRunId: 'r-prev', queuedDueAt: null });
    expect(planFiring(s, T0 + 100, 'finished', 1_000).fire.map((r) => r.dueAt)).toEqual([T0]);
  });

  it('overlap queue-one: holds one due time until the previous run finished, skips a second', () => {
    const s = schedule({ overlap: 'queue-one', lastRunId: 'r-prev', lastDueAt: T0 - MIN });
    const queued = planFiring(s, T0 + 100, 'running', 1_000);
    expect(queued.fire).toEqual([]);
    expect(queued.next).toMatchObject({ queuedDueAt: T0, nextDueAt: T0 + MIN, nextFireAt: T0 + 1_100 });
    const still = planFiring({ ...s, ...queued.next }, T0 + MIN + 100, 'running', 1_000);
    expect(still.skipped).toEqual([{ dueAt: T0 + MIN, reason: 'overlap' }]);
    expect(still.next.queuedDueAt).toBe(T0);
    const released = planFiring({ ...s, ...still.next }, T0 + MIN + 30_000, 'finished', 1_000);
    expect(released.fire.map((r) => r.dueAt)).toEqual([T0]);
    expect(released.next).toMatchObject({ queuedDueAt: null, lastDueAt: T0, nextFireAt: T0 + 2 * MIN });
  });

  it('overlap allow: starts every due time whatever the previous run does', () => {
    const s = schedule({
      overlap: 'allow',
      lastRunId: 'r-prev',
      catchup: { missed: 'run', limit: 5, graceMs: 0 },
    });
    expect(planFiring(s, T0 + 2 * MIN, 'running', 1_000).fire.map((r) => r.dueAt)).toEqual([
      T0,
      T0 + MIN,
      T0 + 2 * MIN,
    ]);
  });
});

describe('firing across daylight-saving changes', () => {
  const iso = (at: number): string => new Date(at).toISOString();
  /**
   * A worker scanning every minute from `from` to `to`, fired from the state the store holds; every
   * other firing that starts runs dies before its write (the store keeps the old state), so each
   * due time is sent twice: once by the firing that died, once by the next scan.
   */
  function fireNights(spec: ScheduleSpec, from: string, to: string): { sent: string[]; runs: string[] } {
    const record = schedule({ spec, catchup: { missed: 'skip', limit: 1, graceMs: 60_000 } });
    let state = freshState(record, Date.parse(from));
    const sent: string[] = [];
    let firings = 0;
    for (let now = Date.parse(from); now < Date.parse(to); now += MIN) {
      if (state.nextFireAt === null || state.nextFireAt > now) continue; // what schedules.due reads
      const plan = planFiring({ ...record, ...state }, now, 'none', 1_000);
      sent.push(...plan.fire.map((run) => iso(run.dueAt)));
      if (plan.fire.length > 0 && ++firings % 2 === 1) continue; // SIGKILL before the write
      state = plan.next;
    }
    return { sent, runs: [...new Set(sent)] };
  }

  it('starts each due time of the nights the clocks change exactly once, through crashes', () => {
    // Paris: 02:30 that does not exist runs at the change (03:00 CEST); 02:30 twice runs once.
    const paris = fireNights(
      { cron: '30 2 * * *', timeZone: 'Europe/Paris' },
      '2026-03-28T12:00Z',
      '2026-03-30T12:00Z',
    );
    expect(paris.runs).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
    expect(paris.sent).toEqual(paris.runs.flatMap((run) => [run, run]));
    const autumn = fireNights(
      { cron: '30 2 * * *', timeZone: 'Europe/Paris' },
      '2026-10-24T12:00Z',
      '2026-10-26T12:00Z',
    );
    expect(autumn.runs).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
    // New York, every 20 minutes: on real time through both passes of 01:00-02:00.
    const ny = fireNights(
      { cron: '*/20 * * * *', timeZone: 'America/New_York' },
      '2026-11-01T04:50Z',
      '2026-11-01T07:10Z',
    );
    expect(ny.runs).toEqual(
      Array.from({ length: 7 }, (_, i) => iso(Date.parse('2026-11-01T05:00Z') + i * 20 * MIN)),
    );
    // Sydney, a named hour: 02:xx on the night it does not exist runs once, at 03:00 AEDT.
    const sydney = fireNights(
      { cron: '*/30 2 * * *', timeZone: 'Australia/Sydney' },
      '2026-10-03T12:00Z',
      '2026-10-04T18:00Z',
    );
    expect(sydney.runs).toEqual([
      '2026-10-03T16:00:00.000Z',
      '2026-10-04T15:00:00.000Z',
      '2026-10-04T15:30:00.000Z',
    ]);
  });

  it('a schedule created or resumed in the second pass of a repeated hour does not run its time again', () => {
    const spec = { cron: '30 1 * * *', timeZone: 'America/New_York' };
    // 01:10 EST (06:10Z): 01:30 EDT has run already; the next is tomorrow, not 01:30 EST today.
    expect(iso(freshState(schedule({ spec }), Date.parse('2026-11-01T06:10Z')).nextDueAt!)).toBe(
      '2026-11-02T06:30:00.000Z',
    );
    expect(iso(freshState(schedule({ spec }), Date.parse('2026-11-01T05:10Z')).nextDueAt!)).toBe(
      '2026-11-01T05:30:00.000Z',
    );
  });
});
