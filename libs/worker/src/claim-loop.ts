/**
 * Step 2 of a run's path through the worker: the claim loop. Fetches run messages while the worker
 * runs, never more than it has room for (worker invariant 3), and hands each to the dispatcher in
 * a slot of its own. Runs the maintenance scans found are handed in the same way (`takeLocally`).
 * While the heap is above the memory budget (memory-budget.ts) it fetches nothing and takes no
 * found run, except one when nothing is in flight, so the worker never stalls.
 *
 * A run waiting in process for a rate limit lends its slot (`lendSlot`): the loop may claim
 * another run meanwhile. At most `concurrency` slots are lent at once (so at most twice
 * `concurrency` runs are in memory), and a run taking its slot back is served before any new
 * claim: it waits only for a run to end, never behind fetched messages.
 *
 * Path: worker.ts (lifecycle) -> claim-loop.ts -> dispatch.ts -> claim.ts -> run/run-session.ts
 * (recovery in run/recovery.ts, then replay) -> run/journal-writer.ts.
 */
import type { Delivery } from '@baton/core/adapter';
import type { ResumeMessage, WakeMessage } from '@baton/core/runtime';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MemoryBudget } from './memory-budget.js';
import type { ResolvedWorkerOptions } from './options.js';
import { localDelivery } from './poison.js';
import { enqueueResume, enqueueWake } from './run/run-messages.js';

const FETCH_BATCH = 64;
/** Wait after a failed fetch before the next. */
const FETCH_RETRY_MS = 500;
/** While holding back for the memory budget: how often the heap is read again (a run ending also wakes the loop). */
const MEMORY_POLL_MS = 20;

/** What the claim loop uses of the worker. Built once in worker.ts. */
export interface ClaimLoopDeps extends Pick<
  ResolvedWorkerOptions,
  'transport' | 'concurrency' | 'fetchWaitMs' | 'logger'
> {
  /** Handles one delivery to its end; never rejects (dispatch.ts). */
  readonly handleDelivery: (delivery: Delivery) => Promise<void>;
  /** Whether the worker still takes new work. */
  readonly running: () => boolean;
  /** Holds claims back while the heap is above the budget. */
  readonly budget: Pick<MemoryBudget, 'start' | 'stop' | 'admit'>;
}

export class ClaimLoop {
  private slots = 0;
  private slotFreed: (() => void) | undefined;
  /** Slots lent by runs waiting for a rate limit, not yet taken back. */
  private lent = 0;
  /** Runs waiting to take a lent slot back, first come first served. */
  private readonly takingBack: Array<() => void> = [];
  private readonly fetchAbort = new AbortController();
  private readonly handling = new Set<Promise<void>>();
  private loop: Promise<void> = Promise.resolve();
  private fetchFailing = false;

  private readonly running: () => boolean;
  private readonly budget: ClaimLoopDeps['budget'];

  constructor(private readonly deps: ClaimLoopDeps) {
    this.running = deps.running;
    this.budget = deps.budget;
  }

  /** Whether the last fetch from the run queue failed. */
  get failing(): boolean {
    return this.fetchFailing;
  }

  start(): void {
    this.budget.start();
    this.loop = this.run();
  }

  /** Stops fetching; resolves once the loop has left (deliveries being handled go on). */
  async stop(): Promise<void> {
    this.fetchAbort.abort();
    // Runs taking a lent slot back go on at once: they are handing off, and nothing is claimed.
    for (const give of this.takingBack.splice(0)) give();
    this.slotFreed?.();
    await this.loop;
    this.budget.stop();
  }

  /** Resolves once every delivery taken so far has been handled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.handling]);
  }

  /**
   * Handles a resume or wake the maintenance scans found as if the queue had delivered it, when
   * there is room. Nothing is lost if this process dies before the claim: the run stays acquirable
   * and the scans report it again a lease period later. A nak sends it through the queue instead.
   */
  takeLocally(message: ResumeMessage | WakeMessage): boolean {
    if (!this.running() || this.slots >= this.deps.concurrency) return false;
    // Above the budget the scans' runs wait on the bus (requeued by the caller) like any message.
    if (this.slots > 0 && this.budget.admit(this.slots) === 0) return false;
    const { transport, logger } = this.deps;
    const requeue = (): Promise<void> =>
      (message.kind === 'resume'
        ? enqueueResume(transport.runQueue, message.runId, message.reason)
        : enqueueWake(transport.runQueue, message.runId, message.reason)
      ).catch((err: unknown) => {
        logger.warn(
          { err, runId: message.runId },
          'requeueing a found run failed; the scans report it again',
        );
      });
    // The decoded message is handed on (poison.ts, localDelivery): no encode-to-decode round trip.
    this.take(
      localDelivery(message, {
        deliveryCount: 1,
        ack: () => Promise.resolve(),
        nak: (delayMs) => {
          if (!delayMs) return requeue();
          setTimeout(() => void requeue(), delayMs).unref();
          return Promise.resolve();
        },
      }),
    );
    return true;
  }

  /**
   * Lends the calling run's slot while it waits for a rate limit; returns the function that takes a
   * slot back (once; it resolves when the run holds one), or undefined when `concurrency` slots are
   * lent already (the run suspends instead).
   */
  lendSlot(): (() => Promise<void>) | undefined {
    if (this.lent >= this.deps.concurrency) return undefined;
    this.lent++;
    this.freeSlot();
    let back: Promise<void> | undefined;
    return () => (back ??= this.takeSlotBack());
  }

  private takeSlotBack(): Promise<void> {
    const take = (): void => {
      this.lent--;
      this.slots++;
    };
    if (this.slots < this.deps.concurrency || !this.running()) {
      take();
      return Promise.resolve();
    }
    return new Promise<void>((resolve) =>
      this.takingBack.push(() => {
        take();
        resolve();
      }),
    );
  }

  /** A slot frees: a run taking its lent slot back gets it before the loop may fetch. */
  private freeSlot(): void {
    this.slots--;
    const next = this.takingBack.shift();
    if (next !== undefined) {
      next();
      return;
    }
    this.slotFreed?.();
    this.slotFreed = undefined;
  }

  private async run(): Promise<void> {
    const { transport, concurrency, fetchWaitMs, logger } = this.deps;
    while (this.running()) {
      const room = concurrency - this.slots;
      if (room <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        continue;
      }
      let max = Math.min(room, FETCH_BATCH);
      const admitted = this.budget.admit(this.slots);
      if (admitted < max) max = admitted;
      if (max === 0) {
        if (this.slots > 0) {
          // Runs in flight will end and free memory: look again soon, or as soon as one ends.
          await this.slotFreedOr(MEMORY_POLL_MS);
          continue;
        }
        // Nothing in flight: one run at a time, so a budget below one run's need never stalls.
        max = 1;
      }
      let batch: Delivery[];
      try {
        batch = await transport.runQueue.fetch({
          max,
          expiresMs: fetchWaitMs,
          signal: this.fetchAbort.signal,
        });
        this.fetchFailing = false;
      } catch (err) {
        if (!this.running()) break;
        this.fetchFailing = true;
        logger.warn({ err }, 'fetching run messages failed; retrying');
        await sleep(FETCH_RETRY_MS, undefined, { ref: false });
        continue;
      }
      for (const delivery of batch) {
        if (!this.running()) {
          await delivery.nak().catch(() => undefined);
          continue;
        }
        this.take(delivery);
      }
    }
  }

  /** Resolves when a slot frees, the loop is stopped, or after `ms`. */
  private slotFreedOr(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.slotFreed = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Handles a delivery in a slot of its own; the slot frees when it is handled. */
  private take(delivery: Delivery): void {
    this.slots++;
    const handled = this.deps.handleDelivery(delivery).finally(() => {
      this.handling.delete(handled);
      this.freeSlot();
    });
    this.handling.add(handled);
  }
}
