/**
 * Renews every lease this worker holds in one batched store call per heartbeat.
 *
 * Invariants:
 * 1. A lease the store refuses to renew is reported lost at once; the run stops writing.
 * 2. When the store cannot be reached, a lease counts as lost once its last confirmed expiry
 *    (measured from when that renewal was *sent*, so never optimistic) has passed.
 */
import { LeaseLostError, type LeaseStore } from '@baton/core';
import type { WorkerInstruments } from '@baton/telemetry';
import type { Logger } from './logger.js';

export interface LeaseHandlers {
  onLost(error: LeaseLostError): void;
  onCancelRequested(): void;
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

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Starts renewing a lease acquired at local time `acquiredAt`. */
  add(runId: string, epoch: number, acquiredAt: number, handlers: LeaseHandlers): void {
    this.held.set(runId, { runId, epoch, validUntil: acquiredAt + this.leaseMs, ...handlers });
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
      const results = await this.store.renewLeases(
        batch.map(({ runId, epoch }) => ({ runId, epoch })),
        this.leaseMs,
      );
      this.lastRenewalAt = Date.now();
      this.lastPassFailed = false;
      let renewed = 0;
      for (const result of results) {
        const entry = this.held.get(result.runId);
        if (!entry) continue;
        if (!result.ok) {
          this.held.delete(result.runId);
          entry.onLost(new LeaseLostError(entry.runId, entry.epoch, 'the store refused the renewal'));
          continue;
        }
        entry.validUntil = sentAt + this.leaseMs;
        renewed++;
        if (result.cancelRequested) entry.onCancelRequested();
      }
      this.instruments?.leaseRenewals.add(renewed);
    } catch (err) {
      this.lastPassFailed = true;
      this.logger.warn({ err, leases: batch.length }, 'lease renewal failed; retrying at the next heartbeat');
      this.expireOverdue();
    }
  }
}
