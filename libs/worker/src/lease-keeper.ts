/**
 * Renews every lease this worker holds in one batched store call per heartbeat.
 *
 * Invariants:
 * 1. A lease the store refuses to renew is reported lost at once; the run stops writing.
 * 2. When the store cannot be reached, a lease counts as lost once its last confirmed expiry
 *    (measured from when that renewal was *sent*, so never optimistic) has passed.
 * 3. A refusal is a loss only when the lease really left this session: a newer epoch holds it, or
 *    it ran out (expired or reaped) at this epoch. A renewal that raced the session's own finish,
 *    suspension or hand-off finds the run finished, suspended or gone at this epoch: that is no
 *    loss and is neither counted nor reported (the store's lease says which, read once per refusal).
 * 4. A renewal's answer applies only to the epoch it was sent for: a later claim of the same run
 *    on this worker is never stopped by an answer meant for the one before.
 */

import { LeaseLostError } from '@baton/core/runtime';
import type { LeaseInfo, LeaseStore } from '@baton/core/adapter';
import type { WorkerInstruments } from '@baton/telemetry';
import type { Logger } from './logger.js';

export interface LeaseHandlers {
  onLost(error: LeaseLostError): void;
  onCancelRequested(): void;
  /** A renewal reported that a pause was requested of the run (called on every such renewal). */
  onPauseRequested?(): void;
  /** The run's own logger (its id, workflow and trace ids bound), for lines about this lease. */
  logger?: Logger;
}

/**
 * What a refused renewal means, from the lease as the store holds it after the refusal:
 * - `moved`: a newer epoch holds the run; this session must stop;
 * - `ran-out`: this epoch's lease expired or was reaped: another worker may take it any moment;
 * - `ended`: the run finished, was suspended or deleted at this epoch: the session's own doing,
 *   which the renewal raced; nothing is lost.
 */
export type RefusalKind = 'moved' | 'ran-out' | 'ended';

/** Reads a refused renewal against the lease the store holds now (undefined: the run is gone). */
export function classifyRefusal(epoch: number, lease: LeaseInfo | undefined): RefusalKind {
  // Retention deletes only finished runs, so a missing lease is a run that ended.
  if (lease === undefined) return 'ended';
  if (lease.epoch > epoch) return 'moved';
  if (lease.state === 'finished' || lease.state === 'suspended') return 'ended';
  return 'ran-out';
}

interface Held extends LeaseHandlers {
  runId: string;
  epoch: number;
  /** Local time by which the lease is known to be valid. */
  validUntil: number;
}

export class LeaseKeeper {
  private readonly held = new Map<string, Held>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastRenewalAt = Date.now();
  private lastPassAt = Date.now();
  private lastPassFailed = false;
  /** Local time of the last round that renewed at least one lease; undefined before the first. */
  private lastLeasesRenewedAt: number | undefined;
  /** Called at every tick, before the renewal is sent (the fleet report); must not throw. */
  private tickListener: (() => void) | undefined;

  constructor(
    private readonly store: LeaseStore,
    private readonly leaseMs: number,
    private readonly heartbeatMs: number,
    private readonly logger: Logger,
    private readonly instruments?: WorkerInstruments,
  ) {}

  start(): void {
    this.schedule();
  }

  /** Calls `listener` at every heartbeat tick; it must return at once and never throw. */
  onTick(listener: () => void): void {
    this.tickListener = listener;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Starts renewing a lease acquired at local time `acquiredAt`. */
  add(runId: string, epoch: number, acquiredAt: number, handlers: LeaseHandlers): void {
    this.held.set(runId, { runId, epoch, validUntil: acquiredAt + this.leaseMs, ...handlers });
  }

  /**
   * Checks that this worker may still act under the lease of `runId` at `epoch`: it renews it and
   * its last confirmed expiry is more than a heartbeat away (the rule every tick stops a run by).
   * Checked before a side effect starts, so a process that wakes from a freeze (SIGSTOP, a long
   * pause, a suspended VM) starts none before its next tick has noticed the loss. An overdue lease
   * is reported lost here, once, as a tick would; one this keeper no longer renews (already
   * reported, or given up) is only answered. Returns the error to stop with, or undefined.
   */
  confirm(runId: string, epoch: number): LeaseLostError | undefined {
    const entry = this.held.get(runId);
    if (entry === undefined || entry.epoch !== epoch)
      return new LeaseLostError(runId, epoch, 'the lease is no longer renewed by this worker');
    if (Date.now() < entry.validUntil - this.heartbeatMs) return undefined;
    this.held.delete(runId);
    const error = new LeaseLostError(runId, epoch, 'no renewal was confirmed before the lease ran out');
    entry.onLost(error);
    return error;
  }

  remove(runId: string): void {
    this.held.delete(runId);
  }

  get size(): number {
    return this.held.size;
  }

  /** When the last renewal round succeeded (for liveness checks). */
  get lastRenewal(): number {
    return this.lastRenewalAt;
  }

  /** Local time of the last round that renewed at least one lease; undefined before the first. */
  get lastLeaseRenewal(): number | undefined {
    return this.lastLeasesRenewedAt;
  }

  /** When the last renewal round settled, successfully or not: the loop is alive. */
  get lastPass(): number {
    return this.lastPassAt;
  }

  /** Whether the last renewal round failed to reach the store. */
  get failing(): boolean {
    return this.lastPassFailed;
  }

  private inFlight = false;

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.schedule();
      this.tickListener?.();
      // A renewal that hangs (partition, frozen server) must not keep a lease alive locally:
      // check expiries on every tick, and send the next renewal only once the last one settled.
      this.expireOverdue();
      if (this.inFlight) return;
      this.inFlight = true;
      void this.renewAll().finally(() => {
        this.inFlight = false;
        this.lastPassAt = Date.now();
      });
    }, this.heartbeatMs);
    this.timer.unref();
  }

  private expireOverdue(): void {
    const now = Date.now();
    for (const entry of this.held.values()) {
      if (now < entry.validUntil - this.heartbeatMs) continue;
      this.held.delete(entry.runId);
      entry.onLost(
        new LeaseLostError(entry.runId, entry.epoch, 'no renewal was confirmed before the lease ran out'),
      );
    }
  }

  private async renewAll(): Promise<void> {
    const batch = [...this.held.values()];
    if (batch.length === 0) {
      this.lastRenewalAt = Date.now();
      this.lastPassFailed = false;
      return;
    }
    const sentAt = Date.now();
    try {
      const results = await this.store.renew(
        batch.map(({ runId, epoch }) => ({ runId, epoch })),
        this.leaseMs,
      );
      this.lastRenewalAt = Date.now();
      this.lastPassFailed = false;
      let renewed = 0;
      const sentEpochs = new Map(batch.map((entry) => [entry.runId, entry.epoch]));
      const refused: Held[] = [];
      for (const result of results) {
        const entry = this.held.get(result.runId);
        if (!entry || entry.epoch !== sentEpochs.get(result.runId)) continue;
        if (!result.ok) {
          this.held.delete(result.runId);
          refused.push(entry);
          continue;
        }
        entry.validUntil = sentAt + this.leaseMs;
        renewed++;
        if (result.cancelRequested) entry.onCancelRequested();
        if (result.pauseRequested === true) entry.onPauseRequested?.();
      }
      if (renewed > 0) this.lastLeasesRenewedAt = this.lastRenewalAt;
      this.instruments?.leaseRenewals.add(renewed);
      await Promise.all(refused.map((entry) => this.settleRefusal(entry)));
    } catch (err) {
      this.lastPassFailed = true;
      this.logger.warn({ err, leases: batch.length }, 'lease renewal failed; retrying at the next heartbeat');
      this.expireOverdue();
    }
  }

  /** Tells a refused renewal's session what it means: stop (a loss), or nothing (it ended itself). */
  private async settleRefusal(entry: Held): Promise<void> {
    let lease: LeaseInfo | undefined;
    try {
      lease = await this.store.get(entry.runId);
    } catch (err) {
      // Unknown is treated as lost: stopping a run that still owned its lease costs a resume,
      // writing on under a lease that moved would be fenced anyway, but wastes work.
      entry.onLost(
        new LeaseLostError(
          entry.runId,
          entry.epoch,
          `the store refused the renewal and the lease could not be read: ${(err as Error).message}`,
        ),
      );
      return;
    }
    const kind = classifyRefusal(entry.epoch, lease);
    if (kind === 'ended') {
      (entry.logger ?? this.logger).debug(
        { runId: entry.runId, epoch: entry.epoch, state: lease?.state ?? 'deleted' },
        'renewal refused after the run ended at this epoch; not a lease loss',
      );
      return;
    }
    entry.onLost(
      new LeaseLostError(
        entry.runId,
        entry.epoch,
        kind === 'moved'
          ? `the store refused the renewal: epoch ${lease!.epoch} now holds the run`
          : 'the store refused the renewal: the lease ran out before it was renewed',
      ),
    );
  }
}
