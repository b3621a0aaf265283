/**
 * A run already under way whose workflow version this worker lacks (a rolling deploy, a mixed
 * fleet) goes back to the queue for a worker that has the version, with a growing delay, however
 * many times that takes. The run is not touched: no lease, no journal entry, no failure, no dead
 * letter (docs/versioning.md).
 */
import type { Delivery, RunRecord, Store } from '@baton/core/adapter';
import { ATTR, type WorkerInstruments } from '@baton/telemetry';
import type { Logger } from './logger.js';
import { workflowKey } from './options.js';
import { redeliveryDelayMs } from './run-messages.js';

/**
 * The first redelivery after 2 x BASE_MS, doubling up to CAP_MS, so a worker that has the version
 * gets the run soon, while a version no worker has costs one delivery per run per CAP_MS.
 */
const BASE_MS = 100;
const CAP_MS = 30_000;
/**
 * After this many put-backs of one message, a message for a run that has a lease is dropped: the
 * scans re-send such a run on their own (the reaper a `held` one every lease period, the timer
 * scan a `suspended` one with a due timer; a signal or cancel makes a suspended run `held`), so
 * keeping every copy circulating would pile messages up for as long as the version is missing.
 * A run without a lease (created, never claimed) has only its message, which is never dropped.
 */
const MAX_NAKS = 6;
/** At most one warning per missing workflow version per this period (the rest are counted). */
const WARN_INTERVAL_MS = 60_000;

export class PutBack {
  /** Per missing `name@version`: when its put-back was last logged and how many since. */
  private readonly warnings = new Map<string, { loggedAt: number; since: number }>();

  constructor(
    private readonly store: Store,
    private readonly registered: () => string[],
    private readonly logger: Logger,
    private readonly instruments: WorkerInstruments,
  ) {}

  async putBack(run: RunRecord, delivery: Delivery): Promise<void> {
    const key = workflowKey(run.workflow, run.version);
    this.instruments.runsPutBack.add(1, {
      [ATTR.workflow]: run.workflow,
      [ATTR.workflowVersion]: run.version,
    });
    const delayMs = redeliveryDelayMs(delivery.deliveryCount, BASE_MS, CAP_MS);
    this.warn(run.runId, key, delayMs);
    if (delivery.deliveryCount > MAX_NAKS) {
      // With a lease, the scans re-send the run (or it is finished): this copy is redundant.
      if (await this.store.getLease(run.runId)) return delivery.ack();
    }
    await delivery.nak(delayMs);
  }

  /** Warns about a missing workflow version at most once per period and version. */
  private warn(runId: string, key: string, delayMs: number): void {
    const now = Date.now();
    const seen = this.warnings.get(key);
    if (seen && now - seen.loggedAt < WARN_INTERVAL_MS) {
      seen.since++;
      return;
    }
    this.warnings.set(key, { loggedAt: now, since: 0 });
    const registered = this.registered();
    this.logger.warn(
      {
        runId,
        workflow: key,
        registered,
        putBacksSinceLastWarning: seen?.since ?? 0,
        retryInMs: delayMs,
      },
      `run ${runId} needs workflow ${key}, which this worker does not register ` +
        `(it has: ${registered.join(', ')}); put back for a worker that has it, not failed. ` +
        `If no worker has ${key}, deploy one that registers it (keep old versions registered until their runs finish)`,
    );
  }
}
