/**
 * The fleet's live workers as a partitioned bus splits its run queue among them
 * ({@link RunQueueMembership}; Kafka's partitionOwnership 'presence'), read every period by every
 * worker at a cost to the store that grows with the fleet, not with its square.
 *
 * Invariants:
 * 1. One worker at a time, the holder of the {@link MEMBERSHIP_TURN} turn, lists the live workers
 *    (`liveWorkers`, O(fleet) on the store) and publishes the list, every period. Every other
 *    worker reads one small record per period (`readMembership`) and the list itself only when
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
 */
import { MEMBERSHIP_TURN, type PresenceStore, type RunQueueMembership } from '@baton/core/adapter';

/**
 * The membership turn lasts this many periods: the holder's next read (a period later, plus the
 * time its store calls take) renews it before it runs out, so the turn stays with one worker
 * while it lives, and a dead holder's turn is free again 1.5 periods after its last renewal.
 */
export const TURN_PERIODS = 1.5;

/** The store calls this needs: presence's. */
export type MembershipStore = Pick<
  PresenceStore,
  'liveWorkers' | 'publishMembership' | 'readMembership' | 'takeScanTurn'
>;

export class SharedMembership implements RunQueueMembership {
  private generation = 0;
  private list: string[] = [];
  private holding = false;
  private left = false;

  constructor(
    private readonly store: MembershipStore,
    readonly memberId: string,
  ) {}

  /** True while this worker holds the turn: it lists the fleet and publishes the list. */
  get publishing(): boolean {
    return this.holding;
  }

  async members(refreshMs: number): Promise<string[]> {
    if (!this.holding || this.left) {
      const published = await this.store.readMembership(this.generation, MEMBERSHIP_TURN);
      if (published.members !== undefined) this.list = published.members;
      this.generation = published.generation;
      if (!published.turnFree || this.left) return this.list;
    }
    const turn = await this.store.takeScanTurn(MEMBERSHIP_TURN, this.memberId, refreshMs * TURN_PERIODS);
    this.holding = turn.held;
    // Another reader took the free turn first (invariant 3): its list comes with the next read.
    if (!turn.held) return this.list;
    const live = await this.store.liveWorkers();
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
    const live = (await this.store.liveWorkers()).filter((id) => id !== this.memberId);
    this.generation = await this.store.publishMembership(live);
    // Renewed for a moment only: free again for the first reader that finds it so.
    await this.store.takeScanTurn(MEMBERSHIP_TURN, this.memberId, 1);
  }
}
