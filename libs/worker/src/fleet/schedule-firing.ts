/**
 * Firing due schedules (docs/schedules.md): one pass reads the schedules whose next firing has come
 * (store clock), decides for each what to start (core's planFiring: catch-up after downtime,
 * overlap with the previous run, jitter), sends the start messages, and only then moves the
 * schedule on with a compare-and-set on the revision it read.
 *
 * Invariants:
 * 1. A due time's run has an id and idempotency key derived from the schedule and the due time
 *    (scheduleRunId), so every firing of one due time starts the same run: the bus de-duplicates
 *    the message by id (NATS) and the store the run by id and key (every bus).
 * 2. Starts are sent before the schedule moves on. A worker that dies between the two leaves the
 *    schedule at the revision it read; the next firing sends the same starts again (a no-op) and
 *    moves it on. So a due time is never skipped by a crash, and never run twice.
 * 3. Of two workers firing the same revision (turns overlap when a holder stalls), exactly one
 *    compare-and-set succeeds; the other's starts were the same runs (1).
 */
import { isFinishedRun, type ScheduleRecord, type Store, type Transport } from '@baton/core/adapter';
import {
  openValue,
  planFiring,
  scheduleSealId,
  sealValue,
  sendRunMessage,
  startMessage,
  type PayloadProtection,
  type PreviousRun,
} from '@baton/core/runtime';
import type { WorkerEvent } from '../events.js';
import type { FaultHook } from '../faults.js';
import type { Logger } from '../logger.js';

/** Due schedules one pass reads at most; a full batch has the next pass follow at once. */
export const SCHEDULE_BATCH = 100;
/**
 * How long a fired run the store does not know is taken as still running (its start may wait in
 * the queue); after that it is taken as finished (deleted), so the overlap policies never wait for
 * a run that is gone.
 */
export const UNKNOWN_RUN_RUNNING_MS = 600_000;

export interface ScheduleFiringOptions {
  logger: Logger;
  emit: (event: WorkerEvent) => void;
  /** How soon a due time queued behind a running run is looked at again (the scan period). */
  recheckMs: number;
  /** Test hook: called between the starts and the compare-and-set. */
  faults?: FaultHook;
  /** Seals each started run's input (docs/integrity.md). */
  payloadProtection?: PayloadProtection;
}

/** What one pass did. */
export interface ScheduleFiringPass {
  /** Run ids started, per due time, in the order sent. */
  started: string[];
  /** True when the batch was full: more schedules may be due. */
  more: boolean;
}

export class ScheduleFiring {
  constructor(
    private readonly store: Store,
    private readonly transport: Transport,
    private readonly options: ScheduleFiringOptions,
  ) {}

  /** One pass over the due schedules (the caller decides whose turn it is); never throws. */
  async fireDue(): Promise<ScheduleFiringPass> {
    const started: string[] = [];
    let due: { now: number; schedules: ScheduleRecord[] };
    try {
      due = await this.store.schedules.due(SCHEDULE_BATCH);
    } catch (err) {
      this.options.logger.warn({ err }, 'reading due schedules failed; retrying next period');
      return { started, more: false };
    }
    for (const schedule of due.schedules) {
      try {
        started.push(...(await this.fire(schedule, due.now)));
      } catch (err) {
        // Nothing moved on: the next pass fires the same due times again (the same runs).
        this.options.logger.warn(
          { err, scheduleId: schedule.scheduleId },
          'firing a schedule failed; retrying next period',
        );
      }
    }
    return { started, more: due.schedules.length === SCHEDULE_BATCH };
  }

  private async fire(schedule: ScheduleRecord, now: number): Promise<string[]> {
    const previous = await this.previousRun(schedule, now);
    const plan = planFiring(schedule, now, previous, this.options.recheckMs);
    const protection = this.options.payloadProtection;
    // Sealed for the schedule when a client with keys wrote it; each run gets it sealed for itself.
    const input =
      plan.fire.length === 0
        ? undefined
        : openValue(schedule.input, scheduleSealId(schedule.scheduleId), 'schedule input', protection);
    for (const run of plan.fire) {
      await sendRunMessage(
        this.transport.runQueue,
        startMessage({
          runId: run.runId,
          workflow: schedule.workflow,
          version: schedule.version,
          input: sealValue(input, run.runId, 'run input', protection),
          idempotencyKey: run.idempotencyKey,
        }),
      );
    }
    if (plan.fire.length > 0) {
      await this.options.faults?.('schedule-starts-sent', { runId: plan.fire[0]!.runId, epoch: 0 });
    }
    const { scheduleId, revision, createdAt: _c, updatedAt: _u, ...rest } = schedule;
    const write = await this.store.schedules.update(scheduleId, revision, { ...rest, ...plan.next });
    const runIds = plan.fire.map((r) => r.runId);
    const dueTimes = plan.fire.map((r) => r.dueAt);
    if (!write.ok) {
      // Another firing moved it on (its starts were these same runs), or an update or delete won.
      this.options.logger.debug(
        { scheduleId, revision, reason: write.reason, runIds },
        'schedule moved on elsewhere',
      );
      return [];
    }
    if (plan.fire.length > 0 || plan.skipped.length > 0) {
      this.options.logger.info(
        {
          scheduleId,
          workflow: schedule.workflow,
          dueTimes: dueTimes.map((t) => new Date(t).toISOString()),
          runIds,
          skipped: plan.skipped.map((s) => ({ dueAt: new Date(s.dueAt).toISOString(), reason: s.reason })),
          nextDueAt: plan.next.nextDueAt === null ? null : new Date(plan.next.nextDueAt).toISOString(),
        },
        'schedule fired',
      );
      this.options.emit({
        type: 'schedule-fired',
        scheduleId,
        runIds,
        dueTimes,
        skipped: plan.skipped.length,
      });
    }
    return runIds;
  }

  /** How the schedule's previous run stands, for the overlap policies. */
  private async previousRun(schedule: ScheduleRecord, now: number): Promise<PreviousRun> {
    if (schedule.overlap === 'allow' || schedule.lastRunId === null) return 'none';
    const run = await this.store.runs.get(schedule.lastRunId);
    if (run !== undefined) return isFinishedRun(run.status) ? 'finished' : 'running';
    const firedAt = schedule.lastDueAt ?? 0;
    return now - firedAt < UNKNOWN_RUN_RUNNING_MS ? 'running' : 'finished';
  }
}
