/**
 * The due times of a cron expression read in an IANA time zone, across daylight-saving changes
 * (docs/schedules.md, "Daylight saving time"). cron-parser matches the expression against wall
 * times only (read in UTC, where no clock ever jumps); this module maps each wall time to the
 * instants it stands for in the zone, with Node's own time-zone data (Intl), and applies one rule
 * where the mapping is not one to one:
 *
 * - **Real-time rhythm**: an expression whose hour field is `*` or a `*` step (`* * * * *`,
 *   `*\/15 * * * *`, `0 * * * *`, `0 *\/2 * * *`, `@hourly`) keeps its rhythm in real time. A wall
 *   time the clocks skip is not due (the hour it stood in never happened); a wall time that
 *   happens twice is due both times.
 * - **Wall-clock appointments**: any other expression (`30 2 * * *`, `*\/15 2 * * *`, `@daily`)
 *   names hours of the day. The wall times the clocks skip are due once, together, at the first
 *   instant after the gap (the change itself: 03:00 in Paris); a wall time that happens twice is
 *   due once, at its first occurrence.
 *
 * That is Vixie cron's rule (cronie, ISC cron: cron(8) "Daylight saving time and other time
 * changes"), with two deliberate differences: a `*` in the minute field alone does not make an
 * appointment periodic (cronie would skip `*\/15 2 * * *` on the spring-forward night and run it
 * eight times on the fall-back night), and the due times of one gap start one run, not one each.
 *
 * Invariants:
 * 1. The due times of (expression, zone) form one strictly increasing sequence of instants,
 *    independent of where it is read from: {@link cronDueTimes} forward from `after` yields exactly
 *    its elements greater than `after`, backward from `atOrBefore` exactly those at or before it.
 *    A chain of firings restarted from any stored due time therefore neither repeats nor loses one.
 * 2. An appointment (wall-clock rhythm) is never doubled by a repeated hour nor lost to a gap.
 * 3. No I/O; the zone is assumed valid (checkScheduleSpec checks it).
 */
import { CronExpressionParser } from 'cron-parser';

const DAY_MS = 86_400_000;

/** How a cron expression treats the wall times a daylight-saving change skips or repeats. */
export type CronRhythm = 'real-time' | 'wall-clock';

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The zone's offset from UTC at instant `at` (ms; +3_600_000 for Paris in winter). */
export function zoneOffsetMs(timeZone: string, at: number): number {
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  let minute = 0;
  let second = 0;
  for (const part of formatterOf(timeZone).formatToParts(at)) {
    const value = Number(part.value);
    if (part.type === 'year') year = value;
    else if (part.type === 'month') month = value;
    else if (part.type === 'day') day = value;
    else if (part.type === 'hour') hour = value;
    else if (part.type === 'minute') minute = value;
    else if (part.type === 'second') second = value;
  }
  const wholeSecond = Math.floor(at / 1_000) * 1_000;
  return Date.UTC(year, month - 1, day, hour, minute, second) - wholeSecond;
}

/** Rhythms already worked out: parsing costs a few hundred µs, and a fleet has few expressions. */
const rhythms = new Map<string, CronRhythm>();
const MAX_RHYTHMS = 1_000;

/** The rhythm of a cron expression: see the module's doc. Throws for one cron-parser refuses. */
export function cronRhythm(cron: string): CronRhythm {
  let rhythm = rhythms.get(cron);
  if (rhythm === undefined) {
    // stringify(true) expands aliases (@hourly) and writes 0-23 as '*': 6 fields, the hour third.
    const fields = CronExpressionParser.parse(cron, { tz: 'UTC', strict: false }).stringify(true).split(' ');
    rhythm = fields[2]?.startsWith('*') === true ? 'real-time' : 'wall-clock';
    if (rhythms.size >= MAX_RHYTHMS) rhythms.clear();
    rhythms.set(cron, rhythm);
  }
  return rhythm;
}

/** The first instant in (lo, hi] whose offset is not lo's: where the clocks changed. */
function changeBetween(timeZone: string, lo: number, hi: number): number {
  const before = zoneOffsetMs(timeZone, lo);
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (zoneOffsetMs(timeZone, mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** Half the span a mapper trusts without asking Intl again (see wallTimeMapper). */
const TRUSTED_MARGIN_MS = 12 * 3_600_000;

/**
 * The instants at which a wall time (its fields written as a UTC time) is due in the zone,
 * ascending: one for most wall times; for a skipped one, the change (wall-clock) or none
 * (real-time); for a repeated one, the first (wall-clock) or both (real-time).
 *
 * The zone's offset is taken as constant between two instants two days apart that have the same
 * one (no zone changes its clocks twice in two days), so a wall time whose instant lies 12 h
 * inside such a span maps without asking Intl again: a per-second cron costs two Intl calls per
 * 12 h of due times, not two per due time.
 */
function wallTimeMapper(timeZone: string, rhythm: CronRhythm): (wall: number) => number[] {
  let trusted: { from: number; to: number; offset: number } | null = null;
  return (wall) => {
    if (trusted !== null) {
      const at = wall - trusted.offset;
      if (at - TRUSTED_MARGIN_MS >= trusted.from && at + TRUSTED_MARGIN_MS <= trusted.to) return [at];
    }
    // An offset a day either side of the wall time covers any one change near it.
    const earlier = zoneOffsetMs(timeZone, wall - DAY_MS);
    const later = zoneOffsetMs(timeZone, wall + DAY_MS);
    if (earlier === later) {
      trusted = { from: wall - DAY_MS, to: wall + DAY_MS, offset: earlier };
      return [wall - earlier];
    }
    const found: number[] = [];
    for (const offset of [earlier, later]) {
      const at = wall - offset;
      if (zoneOffsetMs(timeZone, at) === offset && !found.includes(at)) found.push(at);
    }
    found.sort((a, b) => a - b);
    if (found.length === 0) {
      // Skipped: the clocks jumped over it, between the instants it would be in either offset.
      return rhythm === 'wall-clock' ? [changeBetween(timeZone, wall - later, wall - earlier)] : [];
    }
    return rhythm === 'wall-clock' ? found.slice(0, 1) : found;
  };
}

/**
 * The due times of `cron` in `timeZone`, one per call, null once there are no more: `forward`,
 * those strictly after `from`, ascending; backward, those at or before `from`, descending.
 * Throws what cron-parser throws for an expression it cannot parse.
 */
export function cronDueTimes(
  cron: string,
  timeZone: string,
  from: number,
  direction: 'forward' | 'backward',
): () => number | null {
  const forward = direction === 'forward';
  const rhythm = cronRhythm(cron);
  const instantsOf = wallTimeMapper(timeZone, rhythm);
  // Where to start reading wall times: at `from`'s own, moved by the hour a change just ahead
  // (forward) or just behind (backward) repeats, whose second pass maps wall times below it.
  const offset = zoneOffsetMs(timeZone, from);
  const repeated = forward
    ? Math.max(0, offset - zoneOffsetMs(timeZone, from + 2 * DAY_MS))
    : Math.max(0, zoneOffsetMs(timeZone, from - 2 * DAY_MS) - offset);
  const startWall = forward ? from + offset - repeated : from + offset + repeated + 1;
  const walls = CronExpressionParser.parse(cron, {
    tz: 'UTC',
    strict: false,
    currentDate: new Date(startWall),
  });
  const nextWall = (): number | null => {
    try {
      if (forward ? !walls.hasNext() : !walls.hasPrev()) return null;
      return (forward ? walls.next() : walls.prev()).getTime();
    } catch {
      return null; // cron-parser gives up on an expression that never matches again
    }
  };
  // Instants found but not yet given. A wall time's first instant (its last, backward) bounds
  // every later wall time's instants: the mapping is monotone but for a repeat's second pass,
  // so pending instants up to that bound are final.
  const pending: number[] = [];
  let bound: number | null = null;
  let exhausted = false;
  let last: number | null = null;
  const inRange = (at: number): boolean =>
    (forward ? at > from : at <= from) && (last === null || (forward ? at > last : at < last));
  return () => {
    for (;;) {
      if (
        pending.length > 0 &&
        (exhausted || (bound !== null && (forward ? pending[0]! <= bound : pending[0]! >= bound)))
      ) {
        const at = pending.shift()!;
        if (!inRange(at)) continue;
        last = at;
        return at;
      }
      if (exhausted) return null;
      const wall = nextWall();
      if (wall === null) {
        exhausted = true;
        continue;
      }
      const instants = instantsOf(wall);
      if (instants.length === 0) continue;
      bound = forward ? instants[0]! : instants.at(-1)!;
      pending.push(...instants);
      pending.sort(forward ? (a, b) => a - b : (a, b) => b - a);
    }
  };
}
