/**
 * Schedules: workflow runs started by the fleet at due times, from a cron expression in a time
 * zone or a fixed interval (docs/schedules.md). Part of the Store contract ({@link ScheduleStore});
 * every store implements it, and the store conformance suite checks it.
 *
 * The store keeps each schedule as one record with a `revision` and is the arbiter of who fired a
 * due time: every change is a compare-and-set on the revision ({@link ScheduleStore.update}),
 * so of two workers that read the same revision and fire the same due time, exactly one moves the
 * schedule on. The run a due time starts has an id derived from the schedule and the due time, so
 * a firing repeated after a crash (or by the loser of the compare-and-set) starts the same run:
 * the store de-duplicates it by run id and idempotency key.
 *
 * The store keeps no cron logic: the worker computes the next due times (runtime/schedule-times.ts)
 * and writes them; the store only indexes `nextFireAt` of schedules that are not paused, so the
 * scan of due schedules ({@link ScheduleStore.due}) reads only what is due.
 *
 * Every argument is checked before the store adapter is asked (`checkedStore`,
 * adapter/checked-store.ts): a schedule record, id, listing or due limit that is not valid is a
 * ConfigError naming the field, and the adapter receives the record normalized (unknown fields
 * dropped) and the listing with its page size ({@link CheckedScheduleQuery}).
 *
 * Left out on purpose: large inputs by reference (a schedule's input is kept inline in its record)
 * and the history of past firings (each fired run carries the schedule's idempotency key).
 */

/** When a schedule falls due: a cron expression in a time zone, or every `everyMs`. */
export type ScheduleSpec =
  | {
      /**
       * Five fields (minute hour day-of-month month day-of-week) or six (seconds first); `@daily`
       * and the other aliases of cron-parser are accepted too.
       */
      cron: string;
      /** IANA time zone the expression is read in. @defaultValue 'UTC' */
      timeZone?: string;
    }
  | {
      /**
       * A fixed interval (ms, at least 1000): the due times are the whole multiples of it since the
       * Unix epoch, so `3_600_000` falls due on every full hour (UTC) whoever created it when.
       */
      everyMs: number;
    };

/**
 * What happens to due times the fleet missed (every worker down, or all of them busy for longer
 * than `graceMs`):
 * - `skip`: they start no run; the schedule carries on at its next due time;
 * - `run`: the latest `limit` of them start a run each, oldest first; the earlier ones are skipped.
 * A due time found within `graceMs` of its moment (jitter included) is on time, never missed.
 */
export interface CatchupPolicy {
  missed: 'skip' | 'run';
  /** How many missed due times `run` starts at most. @defaultValue 1 */
  limit: number;
  /** How late a due time may be found and still be on time (ms). @defaultValue 60_000 */
  graceMs: number;
}

/**
 * When a due time comes while the run of the previous one is not finished:
 * - `skip`: the due time starts no run;
 * - `queue-one`: it starts once the previous run finished; a second due time meanwhile is skipped;
 * - `allow`: it starts at once, alongside.
 */
export type OverlapPolicy = 'skip' | 'queue-one' | 'allow';

/** What a schedule starts and when: set by its creator, changed by updates. */
export interface ScheduleDefinition {
  /** Letters, digits, '_', '-', '.' and ':' (1-128). */
  scheduleId: string;
  workflow: string;
  version: number;
  /** The input of every run (JSON data). */
  input: unknown;
  spec: ScheduleSpec;
  catchup: CatchupPolicy;
  overlap: OverlapPolicy;
  /**
   * Each due time's run starts up to this much later (ms), by an amount fixed per schedule and due
   * time (so a repeated firing picks the same moment); spreads schedules that fall due together.
   */
  jitterMs: number;
  /** A paused schedule starts nothing and is never due; resuming carries on at the next due time. */
  paused: boolean;
  /** Free text for operators. */
  note?: string;
}

/** Where a schedule stands: written by the worker that fires it (and by updates). */
export interface ScheduleState {
  /** The next due time (ms since the epoch); null when the expression falls due no more. */
  nextDueAt: number | null;
  /**
   * When the fleet next looks at the schedule (ms, store clock): the next due time plus its
   * jitter, or sooner while a queued due time waits for the previous run. Null: never. The store
   * indexes it for schedules that are not paused.
   */
  nextFireAt: number | null;
  /** A due time held back by the `queue-one` overlap policy until the previous run finishes. */
  queuedDueAt: number | null;
  /** The latest due time that started a run, and that run's id. */
  lastDueAt: number | null;
  lastRunId: string | null;
}

/** A schedule as created or written: definition and state. */
export type NewSchedule = ScheduleDefinition & ScheduleState;

/** A stored schedule. */
export interface ScheduleRecord extends NewSchedule {
  /** 1 when created; one more on every write. The compare-and-set of every change. */
  revision: number;
  /** Store clock (ms). */
  createdAt: number;
  updatedAt: number;
}

/** What {@link ScheduleStore.update} and {@link ScheduleStore.delete} did. */
export type ScheduleWrite =
  | { ok: true; schedule: ScheduleRecord }
  | { ok: false; reason: 'not-found' }
  /** The schedule's revision is not the expected one: someone else wrote it first. */
  | { ok: false; reason: 'conflict'; schedule: ScheduleRecord };

/** Which schedules a listing covers (every field given must match); by id ascending. */
export interface ScheduleQuery {
  workflow?: string;
  paused?: boolean;
  /** 1 to {@link MAX_SCHEDULE_PAGE}. @defaultValue {@link DEFAULT_SCHEDULE_PAGE} */
  limit?: number;
  /** The `cursor` of the previous page: the listing goes on after that id. */
  cursor?: string;
}

/**
 * A listing's query as a store adapter receives it (`StoreAdapter`, store.ts): checked by
 * `checkedStore` (a bad limit or cursor is a ConfigError before the adapter is asked), its page
 * size filled in.
 */
export type CheckedScheduleQuery = ScheduleQuery & { limit: number };

export interface SchedulePage {
  schedules: ScheduleRecord[];
  /** Where the next page starts; absent on the last page. */
  cursor?: string;
}

export const DEFAULT_SCHEDULE_PAGE = 100;
export const MAX_SCHEDULE_PAGE = 1_000;

export interface ScheduleStore {
  /**
   * Stores the schedule with revision 1 unless its id is known; then nothing changes and the
   * answer is the stored record with `created: false`.
   */
  create(schedule: NewSchedule): Promise<{ created: boolean; schedule: ScheduleRecord }>;
  get(scheduleId: string): Promise<ScheduleRecord | undefined>;
  /**
   * Replaces the schedule's definition and state with `next` (its id is kept) only while its
   * revision is `expectedRevision`: the revision becomes one more, `updatedAt` the store's now.
   * Of two writers that read the same revision exactly one succeeds; the other gets `conflict`
   * with the record as it is now.
   */
  update(
    scheduleId: string,
    expectedRevision: number,
    next: Omit<NewSchedule, 'scheduleId'>,
  ): Promise<ScheduleWrite>;
  /**
   * Deletes the schedule (only while its revision is `expectedRevision`, when given). The runs it
   * started are untouched.
   */
  delete(scheduleId: string, expectedRevision?: number): Promise<ScheduleWrite>;
  /** Schedules by id ascending, in pages. */
  list(query?: ScheduleQuery): Promise<SchedulePage>;
  /**
   * Schedules that are not paused and whose `nextFireAt` is at or before the store's now, earliest
   * first, at most `limit`; with that now (ms), which the caller's decisions use as their clock.
   * Reads only: firing is the caller's {@link ScheduleStore.update}.
   */
  due(limit: number): Promise<{ now: number; schedules: ScheduleRecord[] }>;
}
