/**
 * Concurrency per key (`concurrency: { key, limit }` on a workflow): at most `limit` runs with the
 * same key run at once, fleet-wide. The store keeps, per key, the runs holding a slot and a line of
 * runs waiting for one, in arrival order.
 *
 * Invariants (each store keeps them atomically, per key):
 * 1. A slot belongs to a run, not to a worker: a run resumed after its worker died keeps its slot
 *    (its next acquire finds it among the holders), so a SIGKILLed holder's slot moves with the
 *    failover and never waits for a timeout.
 * 2. A holder whose run has finished (or is gone) is forgotten by the next call for its key, so a
 *    worker that died between recording a run's end and releasing its slot leaks nothing for
 *    longer than that. A waiting run that finished or is paused when its turn comes leaves the
 *    line instead of taking the slot (a paused one asks again when it is resumed).
 * 3. Waiting runs are served in order: a free slot goes to the head of the line before any newcomer,
 *    and a run handed a slot has its timer set due now, so the timer scan wakes it even if the
 *    caller's wake message is lost. Nothing polls for a slot.
 * 4. `limit` comes with each call (the workflow's, as the calling worker registers it); a lower
 *    limit than the holders already hold takes effect as they release.
 */

import { ConfigError } from '../../shared/errors.js';

/** One run asking for a slot of `key`. */
export interface SlotRequest {
  key: string;
  limit: number;
  runId: string;
}

/** What {@link ConcurrencyStore.acquire} did. */
export interface SlotAnswer {
  /** The run holds a slot (taken now, or already held). */
  acquired: boolean;
  /** Waiting runs this call handed a freed slot (invariant 3): the caller wakes them. */
  wake: string[];
}

/** Who holds and who waits, for operators and tests. */
export interface SlotState {
  /** In no particular order. */
  holders: string[];
  /** Oldest first. */
  waiting: string[];
}

export interface ConcurrencyStore {
  /**
   * Forgets finished holders (invariant 2), hands free slots to the line's head (invariant 3,
   * `wake`); then the run holds a slot if it already did or if one is free and nobody waits;
   * otherwise it joins the line (once) and `acquired` is false.
   */
  acquire(request: SlotRequest): Promise<SlotAnswer>;
  /**
   * The run gives its slot up (a run that only waited leaves the line); freed slots go to the line's
   * head, whose timers are set due now. Returns the runs handed a slot, for the caller to wake.
   */
  release(request: SlotRequest): Promise<string[]>;
  state(key: string): Promise<SlotState>;
}

/** Longest concurrency key a store accepts. */
export const MAX_CONCURRENCY_KEY_LENGTH = 256;

/**
 * Refuses a request no store should see, naming what is wrong: `checkedStore` calls it before the
 * store adapter is asked (adapter/checked-store.ts), so no adapter does.
 */
export function checkSlotRequest(request: SlotRequest): void {
  const { key, limit } = request;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_CONCURRENCY_KEY_LENGTH) {
    throw new ConfigError(
      `concurrency key ${JSON.stringify(key)} is not a string of 1-${MAX_CONCURRENCY_KEY_LENGTH} characters`,
    );
  }
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ConfigError(`concurrency limit ${String(limit)} for key '${key}' is not a positive integer`);
  }
}
