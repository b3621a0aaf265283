/**
 * A message of a run whose workflow version this worker lacks (a rolling deploy, a mixed fleet)
 * goes back to the queue for a worker that has the version (docs/versioning.md). The run is not
 * touched: no lease, no journal entry, no failure.
 *
 * Where it goes depends on the fleet reports (version-holders.ts):
 * - another live worker registers the version: put back quickly (50 ms doubling up to 500 ms), and on
 *   a bus whose nak stays with this consumer (Kafka) passed on to another consumer
 *   (`Delivery.passOn`), so it reaches the holder without waiting for a rebalance;
 * - none does: put back slowly (doubling up to 30 s). A run under way waits however long that
 *   takes; a start message (nothing of the run exists) is dead-lettered `unknown-workflow` once no
 *   holder has been seen for `missingVersionGraceMs`, and redriven by itself when a worker that
 *   registers the version starts (version-redrive.ts).
 */
import type { Delivery, RunRecord, Store } from '@baton/core/adapter';
import type { StartMessage } from '@baton/core/runtime';
import { ATTR, type WorkerInstruments } from '@baton/telemetry';
import type { WorkerEvent } from './events.js';
import type { Logger } from './logger.js';
import { workflowKey } from './options.js';
import { PoisonMessage } from './poison.js';
import { redeliveryDelayMs } from './run/run-messages.js';
import type { VersionHolders } from './fleet/version-holders.js';

/**
 * No holder: the first redelivery after 2 x BASE_MS, doubling up to CAP_MS, so a version no worker
 * has costs one delivery per message per CAP_MS.
 */
const BASE_MS = 100;
const CAP_MS = 30_000;
/**
 * A live holder exists: 50 ms doubling up to 500 ms, so the message finds it within a few put-backs
 * on a shared consumer (each lands on a random worker) at a bounded cost per message and second.
 */
const HOLDER_BASE_MS = 25;
const HOLDER_CAP_MS = 500;
/**
 * After this many put-backs of one message while no live worker has the version, a message for a
 * run that has a lease is dropped: the scans re-send such a run on their own (the reaper a `held`
 * one every lease period, the timer scan a `suspended` one with a due timer; a signal or cancel
 * makes a suspended run `held`), so keeping every copy circulating would pile messages up for as
 * long as the version is missing. A run without a lease (created, never claimed) has only its
 * message, which is never dropped.
 */
const MAX_NAKS = 6;
/** The same bound while a holder is live: higher, since the copy is on its way to the holder. */
const MAX_NAKS_WITH_HOLDER = 30;
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
    private readonly holders: VersionHolders,
    private readonly graceMs: number,
    private readonly emit: (event: WorkerEvent) => void,
  ) {}

  /** Puts back a message of a run under way (its record exists) whose version this worker lacks. */
  async putBack(run: RunRecord, delivery: Delivery): Promise<void> {
    const toHolder = (await this.holders.someoneHas(run.workflow, run.version)) === true;
    const delayMs = this.count(run.runId, run.workflow, run.version, false, toHolder, delivery);
    if (delivery.deliveryCount > (toHolder ? MAX_NAKS_WITH_HOLDER : MAX_NAKS)) {
      // With a lease, the scans re-send the run (or it is finished): this copy is redundant.
      if (await this.store.leases.get(run.runId)) return delivery.ack();
    }
    return this.send(delivery, delayMs, toHolder);
  }

  /**
   * Puts back a start message whose version this worker lacks and whose run does not exist yet;
   * throws PoisonMessage (`unknown-workflow`, dead-lettered by the caller) once no live worker has
   * registered the version for the grace period.
   */
  async putBackStart(message: StartMessage, delivery: Delivery): Promise<void> {
    const { workflow, version, runId } = message;
    let has = await this.holders.someoneHas(workflow, version);
    let missingMs = this.holders.missingForMs(workflow, version);
    if (has !== true && missingMs >= this.graceMs) {
      // About to dead-letter: ask the fleet afresh, a worker with the version may have just joined.
      has = await this.holders.someoneHas(workflow, version, true);
      missingMs = this.holders.missingForMs(workflow, version);
    }
    if (has !== true && missingMs >= this.graceMs) {
      const known = this.registered().join(', ');
      throw new PoisonMessage(
        'unknown-workflow',
        `workflow ${workflow}@${version} is not registered on this worker (it has: ${known}) nor on ` +
          `any live worker for ${Math.round(missingMs / 1000)} s (missingVersionGraceMs ${this.graceMs}); ` +
          'deploy a worker that registers it: it redrives this dead letter when it starts',
      );
    }
    const toHolder = has === true;
    let delayMs = this.count(runId, workflow, version, true, toHolder, delivery);
    // No holder: come back around the end of the grace, not long after it.
    if (!toHolder) delayMs = Math.max(BASE_MS, Math.min(delayMs, this.graceMs - missingMs));
    return this.send(delivery, delayMs, toHolder);
  }

  /** Counts, warns and reports one put-back; resolves the delay before the message comes again. */
  private count(
    runId: string,
    workflow: string,
    version: number,
    start: boolean,
    toHolder: boolean,
    delivery: Delivery,
  ): number {
    this.instruments.runsPutBack.add(1, { [ATTR.workflow]: workflow, [ATTR.workflowVersion]: version });
    // Jittered to the upper half when a holder is live: copies put back together, and the
    // consumers' fetch cycles, must not fall into step and bring the message back to the same one.
    const delayMs = toHolder
      ? Math.ceil(
          redeliveryDelayMs(delivery.deliveryCount, HOLDER_BASE_MS, HOLDER_CAP_MS) *
            (0.5 + Math.random() / 2),
        )
      : redeliveryDelayMs(delivery.deliveryCount, BASE_MS, CAP_MS);
    this.warn(runId, workflowKey(workflow, version), delayMs);
    this.emit({
      type: 'run-put-back',
      runId,
      workflow,
      version,
      start,
      toHolder,
      deliveryCount: delivery.deliveryCount,
    });
    return delayMs;
  }

  /** To a holder: passed on to another consumer where the bus can; otherwise nakked. */
  private send(delivery: Delivery, delayMs: number, toHolder: boolean): Promise<void> {
    if (toHolder && delivery.passOn !== undefined) return delivery.passOn(delayMs);
    return delivery.nak(delayMs);
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
