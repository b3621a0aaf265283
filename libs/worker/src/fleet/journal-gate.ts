/**
 * When group commit becomes the default, a rolling upgrade runs new workers beside workers of a
 * release that cannot read a run journaled through group records: such a worker, resuming a
 * grouped run, would read an empty journal after the run's checkpoint and run its completed steps
 * again. So a worker whose journal mode was left to the default groups new runs only once every
 * live worker of the fleet says, in its fleet report, that it reads group journals
 * (`readsGroupJournal`); until then new runs are journaled on their own, which every release reads.
 * A worker told `journal: 'group'` explicitly groups at once: its operator says the fleet can.
 *
 * The gate asks the store's fleet listing when the worker starts and then every `checkMs` while
 * closed. Once open it stays open for the life of the process: a worker that cannot read group
 * journals joining later is a rollback, which must set `BATON_JOURNAL=per-run` first
 * (docs/versioning.md), and a fleet that is all upgraded reads no listing at all.
 *
 * Invariants:
 * 1. Closed until a listing said otherwise: a failed or slow listing groups nothing.
 * 2. A listing is judged by the reports it holds: a live worker without `readsGroupJournal` closes it.
 */
import type { FleetStore } from '@baton/core/adapter';
import type { Logger } from '../logger.js';

export class FleetJournalGate {
  private isOpen = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastBlocker: string | undefined;

  constructor(
    private readonly store: FleetStore,
    private readonly checkMs: number,
    private readonly logger: Logger,
  ) {}

  /** True once every live worker reads group journals: new runs are grouped. */
  get open(): boolean {
    return this.isOpen;
  }

  /**
   * Checks now (waiting `waitMs` at most: a store that hangs must not hang the worker's start; the
   * gate stays closed meanwhile), then every `checkMs` until open.
   */
  async start(waitMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
      timer.unref();
    });
    const first = this.check();
    await Promise.race([first, late]);
    clearTimeout(timer);
    void first.then(() => this.schedule());
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** One look at the fleet listing; never throws. */
  async check(): Promise<boolean> {
    if (this.isOpen) return true;
    try {
      const workers = await this.store.list();
      const blocker = workers.find((w) => w.readsGroupJournal !== true);
      if (blocker === undefined) {
        this.isOpen = true;
        this.logger.info(
          { workers: workers.length },
          'group commit on: every live worker reads group journals, so new runs are journaled in group records',
        );
        return true;
      }
      const described = `${blocker.workerId} (host ${blocker.host}, Baton ${blocker.batonVersion})`;
      if (this.lastBlocker !== blocker.workerId) {
        this.logger.info(
          { blocker: blocker.workerId, host: blocker.host, batonVersion: blocker.batonVersion },
          `new runs are journaled per run until every live worker reads group journals: worker ${described} does not`,
        );
      }
      this.lastBlocker = blocker.workerId;
    } catch (err) {
      this.logger.warn(
        { err },
        'reading the fleet for group commit failed; new runs are journaled per run meanwhile',
      );
    }
    return false;
  }

  private schedule(): void {
    if (this.stopped || this.isOpen) return;
    this.timer = setTimeout(() => {
      void this.check().then(() => this.schedule());
    }, this.checkMs);
    this.timer.unref();
  }
}
