/**
 * The reaper and the timer scan, run by every worker: leases that expired (a crashed worker's
 * runs) get a `resume` message, due timers of suspended runs a `wake` message. Both store calls
 * push what they return into the future, so two workers scanning at once enqueue a run once, and
 * a message lost on the way is sent again a period later.
 */
import type { Store, Transport } from '@baton/core';
import type { WorkerEvent } from './events.js';
import type { Logger } from './logger.js';
import { enqueueResume, enqueueWake } from './run-messages.js';

const BATCH = 100;

export class Maintenance {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly transport: Transport,
    private readonly intervalMs: number,
    private readonly reclaimAfterMs: number,
    private readonly logger: Logger,
    private readonly emit: (event: WorkerEvent) => void,
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
      this.running = this.scanOnce().finally(() => this.schedule());
    }, delay);
    this.timer.unref();
  }

  /** One pass of both scans; exported for tests that want to drive it. */
  async scanOnce(): Promise<void> {
    try {
      await this.reapExpiredLeases();
      await this.wakeDueTimers();
    } catch (err) {
      this.logger.warn({ err }, 'maintenance scan failed; retrying next period');
    }
  }

  private async reapExpiredLeases(): Promise<void> {
    for (;;) {
      const runIds = await this.store.reapExpiredLeases(BATCH, this.reclaimAfterMs);
      if (runIds.length === 0) return;
      await Promise.all(runIds.map((runId) => enqueueResume(this.transport, runId, 'reaped')));
      this.logger.info({ runIds }, 'reaped expired leases');
      this.emit({ type: 'leases-reaped', runIds });
      if (runIds.length < BATCH || this.stopped) return;
    }
  }

  private async wakeDueTimers(): Promise<void> {
    for (;;) {
      const due = await this.store.claimDueTimers(BATCH, this.reclaimAfterMs);
      if (due.length === 0) return;
      await Promise.all(due.map(({ runId }) => enqueueWake(this.transport, runId, 'timer')));
      this.emit({ type: 'timers-due', runIds: due.map((t) => t.runId) });
      if (due.length < BATCH || this.stopped) return;
    }
  }
}
