/**
 * The scans every worker runs:
 * - the dead-worker scan (every `deadWorkerScanMs`): workers whose presence connection to the
 *   store dropped (SIGKILL, OOM) have their held leases reaped at once, long before they expire;
 * - the reaper (every `reapIntervalMs`): leases that expired (node loss, a partition, a frozen
 *   process, where no connection drops) get a `resume` message;
 * - the timer scan (same period): due timers of suspended runs get a `wake` message;
 * - the retention sweep (every `retentionSweepMs`, only when `retentionMs` is set): finished runs
 *   older than `retentionMs` lose their store data, then their journal (docs/retention.md). The
 *   store's delete checks that the run is finished, atomically, so no unfinished run is ever touched.
 * Each store call pushes what it returns into the future, so two workers scanning at once enqueue
 * a run once, and a message lost on the way is sent again a period later.
 *
 * A run the scan finds is first offered to this worker (`takeLocally`), which claims it at once
 * when it has room: failover then costs no trip through the bus and, on a partitioned bus, never
 * waits for a dead member's partitions to be reassigned. Only what it declines is enqueued.
 */
import {
  deleteFinishedRun,
  RunStateError,
  type PayloadStore,
  type ResumeMessage,
  type Store,
  type Transport,
  type WakeMessage,
} from '@baton/core';
import type { WorkerEvent } from './events.js';
import type { Logger } from './logger.js';
import { enqueueResume, enqueueWake } from './run-messages.js';

const BATCH = 100;
/** Runs deleted per retention pass at most: a backlog drains over passes, never in one burst. */
export const RETENTION_BATCH = 100;

export interface MaintenanceOptions {
  reapIntervalMs: number;
  /** 0 turns the dead-worker scan off. */
  deadWorkerScanMs: number;
  /** How long a reaped run is not reported again (the lease length). */
  reclaimAfterMs: number;
  logger: Logger;
  emit: (event: WorkerEvent) => void;
  /**
   * Offers a found run to this worker: true when it took the message as if it had come from the
   * queue (it had room), false to have it enqueued for any worker.
   * @defaultValue every run is enqueued
   */
  takeLocally?: (message: ResumeMessage | WakeMessage) => boolean;
  /** Time to live of finished runs; 0 turns the retention sweep off. @defaultValue 0 */
  retentionMs?: number;
  /** Interval of the retention sweep. @defaultValue 60_000 */
  retentionSweepMs?: number;
  /** Where large payloads are kept, when not in the store: the sweep deletes them there too. */
  payloads?: PayloadStore;
}

/** A loop that runs `pass` every `intervalMs` (jittered) until stopped, one pass at a time. */
class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly intervalMs: number,
    private readonly pass: () => Promise<void>,
  ) {}

  start(): void {
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    // Jitter spreads the scans of a fleet that started together.
    const delay = this.intervalMs * (0.75 + Math.random() * 0.5);
    this.timer = setTimeout(() => {
      this.running = this.pass().finally(() => this.schedule());
    }, delay);
    this.timer.unref();
  }
}

export class Maintenance {
  private readonly loops: Periodic[] = [];
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly transport: Transport,
    private readonly options: MaintenanceOptions,
  ) {
    this.loops.push(new Periodic(options.reapIntervalMs, () => this.scanOnce()));
    if (options.deadWorkerScanMs > 0) {
      this.loops.push(new Periodic(options.deadWorkerScanMs, () => this.scanDeadWorkers()));
    }
    if ((options.retentionMs ?? 0) > 0) {
      this.loops.push(
        new Periodic(options.retentionSweepMs ?? 60_000, async () => void (await this.sweepExpiredRuns())),
      );
    }
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops.map((loop) => loop.stop()));
  }

  /** One pass of the reaper and the timer scan; exported for tests that want to drive it. */
  async scanOnce(): Promise<void> {
    try {
      await this.reap('expired', (limit) => this.store.reapExpiredLeases(limit, this.options.reclaimAfterMs));
      await this.wakeDueTimers();
    } catch (err) {
      this.options.logger.warn({ err }, 'maintenance scan failed; retrying next period');
    }
  }

  /** One pass of the dead-worker scan. */
  async scanDeadWorkers(): Promise<void> {
    try {
      await this.reap('dead-worker', (limit) =>
        this.store.reapDeadWorkers(limit, this.options.reclaimAfterMs),
      );
    } catch (err) {
      this.options.logger.warn({ err }, 'dead-worker scan failed; retrying next period');
    }
  }

  /**
   * One pass of the retention sweep: at most {@link RETENTION_BATCH} finished runs older than
   * `retentionMs` are deleted (store first, then the journal). A run another worker deleted first,
   * or one reopened since it was listed, is skipped. Returns the deleted run ids.
   */
  async sweepExpiredRuns(): Promise<string[]> {
    const retentionMs = this.options.retentionMs ?? 0;
    if (retentionMs <= 0) return [];
    const deleted: string[] = [];
    let skipped = 0;
    try {
      for (const runId of await this.store.expiredRuns(retentionMs, RETENTION_BATCH)) {
        if (this.stopped) break;
        try {
          if (await deleteFinishedRun(this.store, this.transport, runId)) deleted.push(runId);
          else skipped += 1;
        } catch (err) {
          // Reopened (retried) since it was listed: no longer finished, so it stays.
          if (!(err instanceof RunStateError)) throw err;
          skipped += 1;
        }
      }
    } catch (err) {
      this.options.logger.warn(
        { err, deleted: deleted.length },
        'retention sweep failed; retrying next period',
      );
    }
    await this.deleteSeparatePayloads(deleted);
    if (deleted.length > 0 || skipped > 0) {
      this.options.logger.info({ deleted: deleted.length, skipped, retentionMs }, 'retention sweep');
    }
    if (deleted.length > 0) this.options.emit({ type: 'runs-expired', runIds: deleted });
    return deleted;
  }

  /**
   * Payloads kept apart from the store (the NATS object store) of runs just deleted: one call per
   * pass, since such a store lists its objects to find a run's. A failure leaves them behind.
   */
  private async deleteSeparatePayloads(runIds: string[]): Promise<void> {
    const payloads = this.options.payloads;
    if (payloads === undefined || payloads === this.store || runIds.length === 0) return;
    try {
      await payloads.deletePayloads(runIds);
    } catch (err) {
      this.options.logger.warn(
        { err, runs: runIds.length, location: payloads.payloadLocation },
        'deleting the large payloads of expired runs failed; they stay behind',
      );
    }
  }

  private async reap(
    cause: 'expired' | 'dead-worker',
    reapBatch: (limit: number) => Promise<string[]>,
  ): Promise<void> {
    for (;;) {
      const runIds = await reapBatch(BATCH);
      if (runIds.length === 0) return;
      await Promise.all(
        runIds.map((runId) =>
          this.offer({ kind: 'resume', runId, reason: 'reaped', since: Date.now() })
            ? undefined
            : enqueueResume(this.transport, runId, 'reaped'),
        ),
      );
      this.options.logger.info({ runIds, cause }, 'reaped leases');
      this.options.emit({ type: 'leases-reaped', runIds, cause });
      if (runIds.length < BATCH || this.stopped) return;
    }
  }

  private offer(message: ResumeMessage | WakeMessage): boolean {
    return !this.stopped && (this.options.takeLocally?.(message) ?? false);
  }

  private async wakeDueTimers(): Promise<void> {
    for (;;) {
      const due = await this.store.claimDueTimers(BATCH, this.options.reclaimAfterMs);
      if (due.length === 0) return;
      await Promise.all(
        due.map(({ runId }) =>
          this.offer({ kind: 'wake', runId, reason: 'timer' })
            ? undefined
            : enqueueWake(this.transport, runId, 'timer'),
        ),
      );
      this.options.emit({ type: 'timers-due', runIds: due.map((t) => t.runId) });
      if (due.length < BATCH || this.stopped) return;
    }
  }
}
