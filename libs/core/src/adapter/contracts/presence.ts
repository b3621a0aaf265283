/**
 * Worker presence (`store.presence`, {@link PresenceStore}, optional in the store contract,
 * store.ts): which workers are alive, bound to their store connections, so a killed worker's runs
 * are resumed when its connection drops instead of when its leases run out; and the fleet's member
 * list, published by one worker and read cheaply by the others.
 */

/**
 * Fast failure detection. A worker registers itself once; the registration is bound to a store
 * connection that lives exactly as long as the worker process (a session-level advisory lock in
 * Postgres, a named client connection in Redis). When the process dies (SIGKILL, OOM), the
 * server closes that connection at once, and any worker's next {@link PresenceStore.reapDead} hands the
 * dead worker's runs on, long before their leases would have run out.
 *
 * Left out on purpose: anything that needs a dropped connection. A partitioned or frozen worker
 * keeps its connection; for that, lease expiry (and fencing) remains the backstop.
 *
 * Optional in {@link Store} (`store.presence`): a store implements all of it or none.
 * Without it nothing is lost but speed: a killed worker's runs resume once their leases expire.
 */
export interface PresenceStore {
  /**
   * Registers `workerId` as alive for as long as this store's connection lives. The adapter keeps
   * the registration across its own reconnects. Registering the same id twice is harmless.
   */
  register(workerId: string): Promise<void>;
  /** Removes the registration (graceful stop): the worker is no longer considered at all. */
  unregister(workerId: string): Promise<void>;
  /**
   * Finds registered workers whose presence connection is gone, forgets them, and reaps every
   * `held` lease they own exactly as {@link LeaseStore.reapExpired} reaps an expired one
   * (owner: nobody, expiry: now + `reclaimAfterMs`), at most `limit` leases per call. Returns the
   * reaped run ids, so the caller enqueues a `resume` for each. Leases of workers that never
   * registered are left to expire.
   */
  reapDead(limit: number, reclaimAfterMs: number): Promise<string[]>;
  /**
   * Registered worker ids whose presence connection is alive. It reads every worker's presence
   * (O(fleet) on the server), so a fleet does not call it from every worker every period: the
   * holder of the {@link MEMBERSHIP_TURN} turn lists the workers and publishes the list
   * ({@link publishMembership}), and the others read that ({@link readMembership}).
   */
  live(): Promise<string[]>;
  /**
   * Publishes the fleet's member list for every worker to read cheaply ({@link readMembership}):
   * called by the holder of the {@link MEMBERSHIP_TURN} turn with what {@link live} just
   * returned. The record's generation moves exactly when `members`, as a set (order and repeats
   * do not count), differ from the set published last; publishing the same set again changes
   * nothing and returns the same generation. A generation is never reused, not even after the
   * record was lost (a Redis restarted empty): each new one is above the last and at least the
   * store's clock in ms. Returns the generation now published.
   */
  publishMembership(members: readonly string[]): Promise<number>;
  /**
   * The published member list ({@link publishMembership}) in one cheap read of one key or row,
   * whatever the fleet's size: its generation (0 when none was ever published), the members
   * (sorted, no repeats) only when that generation differs from `knownGeneration`, and whether
   * the turn of the scan named `turn` is free (nobody holds it, or it ran out). A free turn means
   * the publisher stopped renewing it (died, stopped, or stalled): the reader should take the turn
   * ({@link takeScanTurn}) and publish itself, so the list keeps following the fleet.
   */
  readMembership(knownGeneration: number, turn: string): Promise<PublishedMembership>;
  /**
   * Takes the turn of the fleet-wide scan named `scan` (the worker's: `dead-workers`,
   * `expired-leases`) for `turnMs` on the store's clock. `held` is true when the turn was free,
   * had run out, or was already `workerId`'s (which renews it); false while another worker holds
   * it. A scan that reads the whole fleet (as {@link reapDead} does) is run by the turn's
   * holder only, so its cost per period is that of one scan instead of growing with the fleet's
   * square. A holder registered with {@link register} holds its turn only while its presence
   * lasts: once that is gone (the process died), the next ask takes the turn at once instead of
   * when it runs out, which would add up to `turnMs` to finding the dead worker when the victim
   * held the dead-worker scan. The check must be O(1) on the store, since it comes with refused
   * asks; a wrong "gone" costs one scan run twice, which scans allow. Deliberately left out:
   * fairness (a holder may keep renewing its turn) and any promise that a turn is used: a holder
   * that stalls, or one that never registered, lets its turn run out, and another worker takes
   * the next.
   */
  takeScanTurn(scan: string, workerId: string, turnMs: number): Promise<ScanTurn>;
  /**
   * Optional: calls `listener` whenever a new member list may have been published
   * ({@link publishMembership}) since the last call: told by the store (a notification on the
   * presence session of `workerId`, which must be registered), and once each time that channel
   * (re)connects, since a change may have been missed while it was down. Calls may be spurious;
   * none is lost while the channel is up. A worker whose store has it reads the published list
   * when told, and polls only now and then (to find a free turn: a publisher that died), so the
   * reads the store serves per period stay about the same at any fleet size. Returns a function
   * that stops the calls.
   */
  watchMembership?(workerId: string, listener: () => void): () => void;
}

/**
 * The name of the scan turn whose holder lists the live workers and publishes them
 * ({@link PresenceStore.publishMembership}); every other worker reads the published list
 * ({@link PresenceStore.readMembership}).
 */
export const MEMBERSHIP_TURN = 'membership';

/** The answer of {@link PresenceStore.readMembership}. */
export interface PublishedMembership {
  /** The published list's generation; 0 when none was ever published. */
  generation: number;
  /** The members, sorted, when `generation` differs from the reader's; otherwise left out. */
  members?: string[];
  /** True when nobody holds the turn the reader named (or it ran out): the reader should take it. */
  turnFree: boolean;
}

/** The answer of {@link PresenceStore.takeScanTurn}. */
export interface ScanTurn {
  /** True when the asker holds the turn now. */
  held: boolean;
  /**
   * The workers the store knows of (registered, or with a recent fleet report), as it counts them
   * cheaply: how many may be asking.
   * A worker that was refused asks again less often in a larger fleet, so the asks the store serves
   * per turn stay about the same at any size.
   */
  workers: number;
}
