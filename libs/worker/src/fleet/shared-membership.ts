/**
 * The fleet's live workers as a partitioned bus splits its run queue among them
 * ({@link RunQueueMembership}; Kafka's partitionOwnership 'presence'), read every period by every
 * worker at a cost to the store that grows with the fleet, not with its square.
 *
 * Invariants:
 * 1. One worker at a time, the holder of the {@link MEMBERSHIP_TURN} turn, lists the live workers
 *    (`presence.live`, O(fleet) on the store) and publishes the list, every period. Every other
 *    worker reads one small record per period (`presence.readMembership`) and the list itself only when
 *    its generation moved. Per period the store serves one listing and N small reads, where every
 *    worker listing every worker was N listings of N.
 * 2. The turn lasts {@link TURN_PERIODS} periods and its holder renews it every period. A holder
 *    that dies (or stalls) lets it run out; the first reader that finds it free takes it and lists
 *    at once. A dead holder therefore delays the list by at most the turn's length plus a period,
 *    whatever the fleet's size; any other death by at most two periods (the holder's next listing,
 *    then each reader's next read).
 * 3. Readers racing for a free turn get it one at a time (the store's promise): the others keep
 *    the list they have and read the new one a period later.
 * 4. A failed store call fails the whole read: the caller keeps its last list (the Kafka transport
 *    logs it), and the next period starts over. A worker still counts itself live whatever the
 *    list says (the caller's rule), so a worker that just joined reads its share at once, and the
 *    others make room for it once the holder's next listing is read.
 * 5. With a store that tells of new lists ({@link PresenceStore.watchMembership}: Postgres), a
 *    reader reads the record when told, and otherwise once every {@link pollPeriods} periods, a
 *    number that grows with the fleet so that the whole fleet still reads about
 *    {@link POLLS_PER_PERIOD} times per period: a free turn (a dead holder) is still found within
 *    a fraction of a period, and the store serves about as many reads per period at 500 workers
 *    as at 10. A change reaches a reader a period after its notification at most, as before; a
 *    notification missed (the channel reconnecting, which also tells) is made up by the next poll.
 */
import { MEMBERSHIP_TURN, type PresenceStore, type RunQueueMembership } from '@baton/core/adapter';

/**
 * The membership turn lasts this many periods: the holder's next read (a period later, plus the
 * time its store calls take) renews it before it runs out, so the turn stays with one worker
 * while it lives, and a dead holder's turn is free again 1.5 periods after its last renewal.
 */
export const TURN_PERIODS = 1.5;

/** With a store that tells of new lists: the fleet's reads per period, all readers together. */
export const POLLS_PER_PERIOD = 8;
/** ... and a reader's polls never further apart than this many periods (10 s at 250 ms). */
export const MAX_POLL_PERIODS = 40;

/**
 * Periods between a told reader's polls (invariant 5) in a fleet of `fleet`: the fleet polls about
 * {@link POLLS_PER_PERIOD} times per period, each reader at most every {@link MAX_POLL_PERIODS}.
 */
export function pollPeriods(fleet: number): number {
  return Math.min(MAX_POLL_PERIODS, Math.max(1, Math.ceil(fleet / POLLS_PER_PERIOD)));
}

/** The store calls this needs: presence's. */
export type MembershipStore = Pick<
  PresenceStore,
  'live' | 'publishMembership' | 'readMembership' | 'takeScanTurn' | 'watchMembership'
>;

export class SharedMembership implements RunQueueMembership {
  private generation = 0;
  private list: string[] = [];
  private holding = false;
  private left = false;
  /** Invariant 5: whether the store told of a new list since the last read, and when to poll. */
  private changed = true;
  private pollAt = 0;
  private readonly unwatch: (() => void) | undefined;

  constructor(
    private readonly store: MembershipStore,
    readonly memberId: string,
    private readonly random: () => number = Math.random,
  ) {
    // Set only with a store that tells of new lists (invariant 5).
    this.unwatch = store.watchMembership?.(memberId, () => {
      this.changed = true;
    });
  }

  /** Stops listening for new lists (the worker stopped). */
  close(): void {
    this.unwatch?.();
  }

  /** A reader's read of the published record is due: told of a change, or its poll is (invariant 5). */
  private readDue(): boolean {
    if (this.unwatch === undefined || this.changed) return true;
    return Date.now() >= this.pollAt;
  }

  /** True while this worker holds the turn: it lists the fleet and publishes the list. */
  get publishing(): boolean {
    return this.holding;
  }

  async members(refreshMs: number): Promise<string[]> {
    if (!this.holding || this.left) {
      if (!this.readDue()) return this.list;
      // Cleared before the read: a notification during it marks the next one due again.
      this.changed = false;
      let published;
      try {
        published = await this.store.readMembership(this.generation, MEMBERSHIP_TURN);
      } catch (err) {
        this.changed = true; // read again at the next period (invariant 4)
        throw err;
      }
      if (published.members !== undefined) this.list = published.members;
      this.generation = published.generation;
      // Spread over the interval (0.5 to 1.5 of it), so the readers' polls do not bunch up.
      const interval = refreshMs * pollPeriods(this.list.length);
      this.pollAt = Date.now() + interval * (0.5 + this.random());
      if (!published.turnFree || this.left) return this.list;
    }
    const turn = await this.store.takeScanTurn(MEMBERSHIP_TURN, this.memberId, refreshMs * TURN_PERIODS);
    // A leave() meanwhile wins: a turn taken on the way out runs out by itself (invariant 2).
    this.holding = turn.held && !this.left;
    // Another reader took the free turn first (invariant 3): its list comes with the next read.
    if (!this.holding) return this.list;
    const live = await this.store.live();
    if (this.left) return this.list;
    this.generation = await this.store.publishMembership(live);
    this.list = [...new Set(live)].sort();
    return this.list;
  }

  /**
   * A graceful stop (after the worker unregistered): this worker never takes the turn again, and
   * if it held it, it publishes the fleet without itself and lets the turn go at once, so its
   * partitions move at the others' next read rather than after the turn ran out.
   */
  async leave(): Promise<void> {
    this.left = true;
    if (!this.holding) return;
    this.holding = false;
    const live = (await this.store.live()).filter((id) => id !== this.memberId);
    this.generation = await this.store.publishMembership(live);
    // Renewed for a moment only: free again for the first reader that finds it so.
    await this.store.takeScanTurn(MEMBERSHIP_TURN, this.memberId, 1);
  }
}
