import { describe, expect, it } from 'vitest';
import { cronDueTimes, cronRhythm, zoneOffsetMs } from './cron-due-times.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** The first `count` due times strictly after `from`, as ISO strings (UTC). */
function dueAfter(cron: string, timeZone: string, from: string, count: number): string[] {
  const next = cronDueTimes(cron, timeZone, Date.parse(from), 'forward');
  const out: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const at = next();
    if (at === null) break;
    out.push(new Date(at).toISOString().replace(':00.000Z', 'Z'));
  }
  return out;
}

/** Every due time in [from, to), read forward from just before `from`. */
function dueBetween(cron: string, timeZone: string, from: number, to: number): number[] {
  const next = cronDueTimes(cron, timeZone, from - 1, 'forward');
  const out: number[] = [];
  for (let at = next(); at !== null && at < to; at = next()) out.push(at);
  return out;
}

// The 2026 changes used below, from Node's time-zone data (checked by the first test):
//   Europe/Paris         29 Mar 02:00 -> 03:00 (01:00Z)    25 Oct 03:00 -> 02:00 (01:00Z)
//   America/New_York      8 Mar 02:00 -> 03:00 (07:00Z)     1 Nov 02:00 -> 01:00 (06:00Z)
//   Australia/Sydney      4 Oct 02:00 -> 03:00 (3 Oct 16:00Z)  5 Apr 03:00 -> 02:00 (4 Apr 16:00Z)
//   Australia/Lord_Howe   4 Oct 02:00 -> 02:30 (3 Oct 15:30Z)  5 Apr 02:00 -> 01:30 (4 Apr 15:00Z)
//   America/Havana        8 Mar 00:00 -> 01:00 (05:00Z)     1 Nov 01:00 -> 00:00 (05:00Z)
//   America/Santiago      6 Sep 00:00 -> 01:00 (04:00Z)     5 Apr 00:00 -> 4 Apr 23:00 (03:00Z)
const CHANGES = [
  { zone: 'Europe/Paris', forward: '2026-03-29T01:00Z', back: '2026-10-25T01:00Z', shift: HOUR },
  { zone: 'America/New_York', forward: '2026-03-08T07:00Z', back: '2026-11-01T06:00Z', shift: HOUR },
  { zone: 'Australia/Sydney', forward: '2026-10-03T16:00Z', back: '2026-04-04T16:00Z', shift: HOUR },
  { zone: 'Australia/Lord_Howe', forward: '2026-10-03T15:30Z', back: '2026-04-04T15:00Z', shift: HOUR / 2 },
  { zone: 'America/Havana', forward: '2026-03-08T05:00Z', back: '2026-11-01T05:00Z', shift: HOUR },
  { zone: 'America/Santiago', forward: '2026-09-06T04:00Z', back: '2026-04-05T03:00Z', shift: HOUR },
] as const;

describe('time-zone data', () => {
  it('has the 2026 changes these tests are written against', () => {
    for (const { zone, forward, back, shift } of CHANGES) {
      const f = Date.parse(forward);
      const b = Date.parse(back);
      expect(zoneOffsetMs(zone, f) - zoneOffsetMs(zone, f - 1), `${zone} spring forward`).toBe(shift);
      expect(zoneOffsetMs(zone, b - 1) - zoneOffsetMs(zone, b), `${zone} fall back`).toBe(shift);
    }
    expect(zoneOffsetMs('Asia/Kolkata', Date.parse('2026-03-29T01:00Z'))).toBe(5.5 * HOUR);
  });
});

describe('cron rhythm', () => {
  it('is real-time when the hour field is * or a * step, wall-clock when it names hours', () => {
    for (const cron of [
      '* * * * *',
      '*/15 * * * *',
      '0 * * * *',
      '30 */2 * * *',
      '@hourly',
      '0 0-23 * * *',
      '0 0 * * * *',
    ])
      expect(cronRhythm(cron), cron).toBe('real-time');
    for (const cron of [
      '30 2 * * *',
      '*/15 2 * * *',
      '0 1-3 * * *',
      '0 0,12 * * *',
      '@daily',
      '@weekly',
      '0 30 2 * * *',
    ])
      expect(cronRhythm(cron), cron).toBe('wall-clock');
  });
});

describe('spring forward: local times the clocks skip', () => {
  it('a daily time in the gap runs once, at the change, in every zone', () => {
    // Paris 02:30 -> 03:00 CEST (01:00Z), not 03:30 and not skipped; the days around are normal.
    expect(dueAfter('30 2 * * *', 'Europe/Paris', '2026-03-28T00:00Z', 3)).toEqual([
      '2026-03-28T01:30Z',
      '2026-03-29T01:00Z',
      '2026-03-30T00:30Z',
    ]);
    expect(dueAfter('30 2 * * *', 'America/New_York', '2026-03-07T00:00Z', 3)).toEqual([
      '2026-03-07T07:30Z',
      '2026-03-08T07:00Z',
      '2026-03-09T06:30Z',
    ]);
    // Southern hemisphere: Sydney springs forward in October.
    expect(dueAfter('30 2 * * *', 'Australia/Sydney', '2026-10-02T12:00Z', 3)).toEqual([
      '2026-10-02T16:30Z',
      '2026-10-03T16:00Z',
      '2026-10-04T15:30Z',
    ]);
    // Lord Howe moves 30 minutes: 02:15 is skipped (runs at 02:30), 02:45 exists.
    expect(dueAfter('15 2 * * *', 'Australia/Lord_Howe', '2026-10-02T12:00Z', 3)).toEqual([
      '2026-10-02T15:45Z',
      '2026-10-03T15:30Z',
      '2026-10-04T15:15Z',
    ]);
    expect(dueAfter('45 2 * * *', 'Australia/Lord_Howe', '2026-10-03T12:00Z', 1)).toEqual([
      '2026-10-03T15:45Z',
    ]);
    // Havana and Santiago skip midnight itself: @daily runs at 01:00 that day, on that day.
    expect(dueAfter('@daily', 'America/Havana', '2026-03-07T00:00Z', 3)).toEqual([
      '2026-03-07T05:00Z',
      '2026-03-08T05:00Z',
      '2026-03-09T04:00Z',
    ]);
    expect(dueAfter('0 0 * * 0', 'America/Santiago', '2026-08-31T00:00Z', 2)).toEqual([
      '2026-09-06T04:00Z',
      '2026-09-13T03:00Z',
    ]);
  });

  it('every due time of a named hour in the gap runs once, together, at the change', () => {
    // */15 2 * * *: four runs on a normal night, one (at 03:00 CEST) on the night without 02:xx.
    expect(dueAfter('*/15 2 * * *', 'Europe/Paris', '2026-03-28T00:00Z', 6)).toEqual([
      '2026-03-28T01:00Z',
      '2026-03-28T01:15Z',
      '2026-03-28T01:30Z',
      '2026-03-28T01:45Z',
      '2026-03-29T01:00Z',
      '2026-03-30T00:00Z',
    ]);
    // 02:00 to 03:45: the gap's due times and 03:00's own are one run at 03:00, then 03:15 ...
    expect(dueAfter('*/15 2-3 * * *', 'America/New_York', '2026-03-08T06:00Z', 4)).toEqual([
      '2026-03-08T07:00Z',
      '2026-03-08T07:15Z',
      '2026-03-08T07:30Z',
      '2026-03-08T07:45Z',
    ]);
  });

  it('an expression on every hour keeps its rhythm in real time: nothing in the gap, nothing extra', () => {
    // Every 15 minutes: 01:45 CET then 03:00 CEST, 15 real minutes apart.
    const paris = Date.parse('2026-03-29T01:00Z');
    const every15 = dueBetween('*/15 * * * *', 'Europe/Paris', paris - 2 * HOUR, paris + 2 * HOUR);
    expect(every15.slice(1).map((at, i) => at - every15[i]!)).toEqual(Array(15).fill(15 * MIN));
    // :30 past every hour: 01:30 CET then 03:30 CEST, an hour apart (no run at the change).
    expect(dueAfter('30 * * * *', 'Europe/Paris', '2026-03-29T00:00Z', 3)).toEqual([
      '2026-03-29T00:30Z',
      '2026-03-29T01:30Z',
      '2026-03-29T02:30Z',
    ]);
    // Lord Howe: the hourly run at 02:00 does not exist that night; 01:00 and 03:00 do.
    expect(dueAfter('0 * * * *', 'Australia/Lord_Howe', '2026-10-03T14:00Z', 2)).toEqual([
      '2026-10-03T14:30Z',
      '2026-10-03T16:00Z',
    ]);
    // Every second hour, cronie's rule for a * step: 02:00 Paris is not run that night.
    expect(dueAfter('0 */2 * * *', 'Europe/Paris', '2026-03-28T22:00Z', 2)).toEqual([
      '2026-03-28T23:00Z',
      '2026-03-29T02:00Z',
    ]);
  });
});

describe('fall back: local times that happen twice', () => {
  it('a daily time in the repeated hour runs once, at its first occurrence, in every zone', () => {
    // New York 01:30 happens at 05:30Z (EDT) and 06:30Z (EST): runs at 05:30Z only.
    expect(dueAfter('30 1 * * *', 'America/New_York', '2026-10-31T12:00Z', 2)).toEqual([
      '2026-11-01T05:30Z',
      '2026-11-02T06:30Z',
    ]);
    expect(dueAfter('30 2 * * *', 'Europe/Paris', '2026-10-24T12:00Z', 2)).toEqual([
      '2026-10-25T00:30Z',
      '2026-10-26T01:30Z',
    ]);
    // Sydney falls back in April: 02:30 AEDT (15:30Z), not 02:30 AEST (16:30Z).
    expect(dueAfter('30 2 * * *', 'Australia/Sydney', '2026-04-04T00:00Z', 2)).toEqual([
      '2026-04-04T15:30Z',
      '2026-04-05T16:30Z',
    ]);
    // Lord Howe repeats 01:30-02:00 only: 01:45 runs once, 01:15 is not repeated at all.
    expect(dueAfter('15,45 1 * * *', 'Australia/Lord_Howe', '2026-04-04T12:00Z', 3)).toEqual([
      '2026-04-04T14:15Z',
      '2026-04-04T14:45Z',
      '2026-04-05T14:45Z',
    ]);
    // Santiago repeats 23:00 on Saturday 4 April: 23:30 runs at its first occurrence (02:30Z).
    expect(dueAfter('30 23 * * *', 'America/Santiago', '2026-04-04T12:00Z', 2)).toEqual([
      '2026-04-05T02:30Z',
      '2026-04-06T03:30Z',
    ]);
  });

  it('a named hour that happens twice runs its due times once, in the first pass', () => {
    expect(dueAfter('*/15 1 * * *', 'America/New_York', '2026-11-01T04:00Z', 5)).toEqual([
      '2026-11-01T05:00Z',
      '2026-11-01T05:15Z',
      '2026-11-01T05:30Z',
      '2026-11-01T05:45Z',
      '2026-11-02T06:00Z',
    ]);
  });

  it('an expression on every hour runs in both passes, on real time', () => {
    for (const { zone, back } of CHANGES) {
      const change = Date.parse(back);
      const every15 = dueBetween('*/15 * * * *', zone, change - 2 * HOUR, change + 2 * HOUR);
      expect(every15, zone).toHaveLength(16);
      expect(
        every15.slice(1).map((at, i) => at - every15[i]!),
        zone,
      ).toEqual(Array(15).fill(15 * MIN));
    }
    // Hourly: 01:00 EDT and 01:00 EST both run.
    expect(dueAfter('0 * * * *', 'America/New_York', '2026-11-01T04:30Z', 4)).toEqual([
      '2026-11-01T05:00Z',
      '2026-11-01T06:00Z',
      '2026-11-01T07:00Z',
      '2026-11-01T08:00Z',
    ]);
  });
});

describe('one sequence wherever it is read from (restarts)', () => {
  const cases = ['30 2 * * *', '*/15 2 * * *', '15,45 0-3 * * *', '*/15 * * * *', '30 */20 * * * *'];
  it.each(CHANGES)('reads the same due times forward and backward from any instant in $zone', (change) => {
    for (const at of [Date.parse(change.forward), Date.parse(change.back)]) {
      for (const cron of cases) {
        const from = at - 30 * HOUR;
        const to = at + 30 * HOUR;
        const all = dueBetween(cron, change.zone, from, to);
        const label = `${cron} in ${change.zone} around ${new Date(at).toISOString()}`;
        expect(new Set(all).size, label).toBe(all.length);
        // Backward from the end: the same due times, latest first.
        const previous = cronDueTimes(cron, change.zone, to - 1, 'backward');
        const backward: number[] = [];
        for (let d = previous(); d !== null && d >= from; d = previous()) backward.push(d);
        expect(backward.reverse(), label).toEqual(all);
        // A firing resumed from any point near the change (every 15 minutes, each due time and
        // 1 ms either side) finds that point's neighbours in the one sequence.
        const points = all.filter((d) => Math.abs(d - at) <= 3 * HOUR).flatMap((d) => [d - 1, d, d + 1]);
        for (let p = at - 3 * HOUR; p <= at + 3 * HOUR; p += 15 * MIN) points.push(p);
        for (const p of points) {
          const where = `${label} from ${new Date(p).toISOString()}`;
          expect(cronDueTimes(cron, change.zone, p, 'forward')(), where).toBe(all.find((d) => d > p));
          expect(cronDueTimes(cron, change.zone, p, 'backward')(), where).toBe(all.findLast((d) => d <= p));
        }
      }
    }
  });
});
