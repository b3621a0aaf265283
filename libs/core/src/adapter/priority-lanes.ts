/**
 * A run queue's fetch over one lane per priority level (priority.ts states the policy). Each
 * transport keeps a lane per level (memory: a queue; NATS: a stream and consumer; Kafka: a topic)
 * and hands this class one fetch function per lane; the choosing lives here, once, with no I/O.
 *
 * Invariants:
 * 1. A fetch returns at most `max` deliveries, highest level first.
 * 2. Claims follow {@link PRIORITY_CYCLE}: the cycle moves on by the number of deliveries returned,
 *    and a slot whose level has nothing ready goes to the highest level that has.
 * 3. Messages ready on any lane are returned without waiting; the lanes asked are asked together
 *    (one round trip, not one per lane). Only when every lane is empty does a fetch wait, on every
 *    lane at once, and the first lane to deliver ends it.
 * 4. Waiting costs what it did with a single queue: when a lane delivers, the waits on the other
 *    lanes are not torn down but kept for the next fetch, which a claim loop makes at once. Kept
 *    waits end when no fetch has come for {@link PARKED_WAIT_MS}, when a fetch's signal aborts
 *    with no other fetch waiting, or at their own expiry.
 * 5. What lanes deliver beyond a fetch's `max`, or while no fetch waits (a kept wait), is held and
 *    returned first by the next fetch. Held deliveries nobody fetched within PARKED_WAIT_MS are
 *    nakked (back to the queue at once, for any worker), so a worker that stopped fetching (every
 *    slot busy, or stopping) never sits on a run another worker could take.
 * 6. A lane found empty may be skipped, while other lanes supply the fetch, for `emptyRecheckMs`
 *    (a bus where asking an empty lane costs a round trip): a message arriving there meanwhile is
 *    found within that time, or at once when the other lanes run dry (invariant 3). A lane still
 *    waiting when another lane delivered counts as found empty then. A lane with a wait under way
 *    is not asked at all: the wait brings what arrives there.
 */
import type { Delivery, FetchOptions } from './contracts/transport.js';
import { PRIORITY_CYCLE, RUN_PRIORITIES, planClaims, priorityRank, type RunPriority } from './priority.js';

/**
 * One lane's fetch: the transport's fetch for the queue of one level. `foundEmpty` is true when
 * the lane was found empty an instant ago: a lane that pays a round trip to look (NATS) may then go
 * straight to waiting instead of looking again first.
 */
export type LaneFetch = (options: FetchOptions, foundEmpty?: boolean) => Promise<Delivery[]>;

/** How long waits kept from one fetch (invariant 4) and held deliveries (5) wait for the next. */
export const PARKED_WAIT_MS = 50;
/** A lane's wait that returned empty this close to its expiry ran its course (it was not ended). */
const EXPIRY_SLACK_MS = 50;

interface Claimed {
  level: RunPriority;
  delivery: Delivery;
}

/** A fetch waiting for a lane to deliver. */
interface Waiter {
  max: number;
  deadline: number;
  finish(claimed: Claimed[]): void;
  /** A lane's wait failed: the fetch rejects with its error (a claim loop backs off). */
  fail(err: unknown): void;
}

/** Chooses among the lanes of a prioritised run queue; see the invariants above. */
export class PriorityLanes {
  /** The next slot of {@link PRIORITY_CYCLE}. */
  private position = 0;
  /** Per level, until when it counts as empty (invariant 6). */
  private readonly emptyUntil = new Map<RunPriority, number>();
  /** Deliveries no fetch has taken yet (invariant 5), highest level first. */
  private held: Claimed[] = [];
  /** Fetches waiting, oldest first. */
  private readonly waiters: Waiter[] = [];
  /** The lanes with a wait under way (invariant 4). */
  private readonly waiting = new Set<RunPriority>();
  /** Ends the waits under way; replaced once used. */
  private waitsEnd = new AbortController();
  /** Ends kept waits and returns held deliveries when no fetch came (invariants 4 and 5). */
  private parkedTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(
    private readonly lanes: Readonly<Record<RunPriority, LaneFetch>>,
    /** How long a lane found empty is skipped while others supply the fetch; 0 asks every time. */
    private readonly emptyRecheckMs = 0,
  ) {}

  /**
   * The transport is closing: waiting fetches return an empty batch now, waits end, and held
   * deliveries are left to the bus (its ack wait, or the next owner of a partition).
   */
  close(): void {
    this.closed = true;
    this.unpark();
    for (const waiter of [...this.waiters]) waiter.finish([]);
    this.endWaits();
    this.held = [];
  }

  async fetch(options: FetchOptions): Promise<Delivery[]> {
    const max = Math.floor(options.max);
    if (max < 1 || this.closed) return [];
    this.unpark();
    try {
      const claimed = this.held.splice(0, max);
      let foundEmpty = new Set<RunPriority>();
      if (claimed.length < max) {
        const ready = await this.takeReady(max - claimed.length);
        claimed.push(...ready.claimed);
        foundEmpty = ready.foundEmpty;
        // Kept waits may have brought something meanwhile (invariant 5).
        claimed.push(...this.held.splice(0, max - claimed.length));
      }
      if (claimed.length > 0 || options.expiresMs <= 0 || options.signal?.aborted) {
        return this.handOut(claimed);
      }
      return this.handOut(await this.waitOnAll(options, max, foundEmpty));
    } finally {
      if (this.waiters.length === 0) this.park();
    }
  }

  /** Deliveries ready now, per the cycle (invariant 2), without waiting. */
  private async takeReady(max: number): Promise<{ claimed: Claimed[]; foundEmpty: Set<RunPriority> }> {
    const now = Date.now();
    // A lane with a wait under way is empty but for what that wait is bringing (into `held`): no
    // need to ask it. A lane found empty a moment ago is skipped too, unless every lane would be.
    const waited = RUN_PRIORITIES.filter((p) => this.waiting.has(p));
    const skipped = new Set(
      RUN_PRIORITIES.filter((p) => !this.waiting.has(p) && (this.emptyUntil.get(p) ?? 0) > now),
    );
    if (skipped.size + waited.length === RUN_PRIORITIES.length) skipped.clear();
    for (const level of waited) skipped.add(level);
    // Known empty a moment ago: a wait on them need not look first (LaneFetch's `foundEmpty`).
    const foundEmpty = new Set<RunPriority>(skipped);
    const plan = planClaims(this.position, max, skipped);
    const claimed: Claimed[] = [];
    const exhausted = new Set<RunPriority>(skipped);
    const take = async (level: RunPriority, count: number): Promise<void> => {
      const batch = await this.lanes[level]({ max: count, expiresMs: 0 });
      for (const delivery of batch) claimed.push({ level, delivery });
      if (batch.length < count) exhausted.add(level);
      if (batch.length === 0) {
        foundEmpty.add(level);
        this.markEmpty(level, now);
      } else this.emptyUntil.delete(level);
    };
    await Promise.all(
      RUN_PRIORITIES.filter((level) => plan[level] > 0 && !skipped.has(level)).map((level) =>
        take(level, plan[level]),
      ),
    );
    // Slots of levels that ran short go to the highest level that may have more.
    for (const level of RUN_PRIORITIES) {
      const left = max - claimed.length;
      if (left === 0) break;
      if (!exhausted.has(level)) await take(level, left);
    }
    return { claimed, foundEmpty };
  }

  private markEmpty(level: RunPriority, now: number): void {
    if (this.emptyRecheckMs > 0) this.emptyUntil.set(level, now + this.emptyRecheckMs);
  }

  /** Every lane was empty: waits for the first lane to deliver, or the fetch's end (invariant 3). */
  private waitOnAll(options: FetchOptions, max: number, foundEmpty: Set<RunPriority>): Promise<Claimed[]> {
    const { signal } = options;
    return new Promise<Claimed[]>((resolve, reject) => {
      const onAbort = (): void => {
        waiter.finish([]);
        // A stopping claim loop will not fetch again: its waits end now, not after PARKED_WAIT_MS.
        if (this.waiters.length === 0) this.endWaits();
      };
      const settle = (): void => {
        clearTimeout(expiry);
        signal?.removeEventListener('abort', onAbort);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
      };
      const waiter: Waiter = {
        max,
        deadline: Date.now() + options.expiresMs,
        finish: (claimed) => {
          settle();
          resolve(claimed);
        },
        fail: (err) => {
          settle();
          reject(err);
        },
      };
      const expiry = setTimeout(() => waiter.finish([]), options.expiresMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.unpark();
      // Kept waits may have brought something while this fetch looked for ready messages.
      if (this.held.length > 0) return this.deliver([]);
      for (const level of RUN_PRIORITIES) this.waitOn(level, foundEmpty.has(level));
    });
  }

  /** Starts a wait on `level` unless one is under way; what it brings goes to a waiter or is held. */
  private waitOn(level: RunPriority, foundEmpty: boolean): void {
    if (this.waiting.has(level)) return;
    const deadline = Math.max(...this.waiters.map((w) => w.deadline));
    const expiresMs = deadline - Date.now();
    if (!(expiresMs > 0)) return;
    this.waiting.add(level);
    const ended = this.waitsEnd.signal;
    const max = Math.max(...this.waiters.map((w) => w.max));
    const startedAt = Date.now();
    this.lanes[level]({ max, expiresMs, signal: ended }, foundEmpty).then(
      (batch) => {
        this.waiting.delete(level);
        if (batch.length === 0) {
          // Ran to its expiry while a later fetch still waits (a kept wait outlives the fetch that
          // started it): wait on. A wait that ended early (aborted, closing) is not restarted.
          const expired = Date.now() - startedAt >= expiresMs - EXPIRY_SLACK_MS;
          if (expired && !ended.aborted && this.waiters.length > 0) this.waitOn(level, true);
          return;
        }
        this.emptyUntil.delete(level);
        this.deliver(batch.map((delivery) => ({ level, delivery })));
        // The other lanes were still waiting: empty a moment ago (invariant 6).
        const now = Date.now();
        for (const other of RUN_PRIORITIES) {
          if (other !== level && this.waiting.has(other)) this.markEmpty(other, now);
        }
        if (this.waiters.length > 0) this.waitOn(level, true);
      },
      (err: unknown) => {
        this.waiting.delete(level);
        // Not retried here (a refused pull would spin): the fetch fails and the claim loop backs off.
        for (const waiter of [...this.waiters]) waiter.fail(err);
      },
    );
  }

  /** Hands deliveries to the waiting fetches, oldest first; the rest are held (invariant 5). */
  private deliver(claimed: Claimed[]): void {
    this.held.push(...claimed);
    this.held.sort((a, b) => priorityRank(a.level) - priorityRank(b.level));
    while (this.held.length > 0 && this.waiters.length > 0) {
      const waiter = this.waiters[0]!;
      waiter.finish(this.held.splice(0, waiter.max));
    }
    if (this.waiters.length === 0) this.park();
  }

  /** No fetch is waiting: kept waits and held deliveries wait PARKED_WAIT_MS for the next one. */
  private park(): void {
    if (this.parkedTimer !== undefined) return;
    if (this.waiting.size === 0 && this.held.length === 0) return;
    this.parkedTimer = setTimeout(() => {
      this.parkedTimer = undefined;
      this.endWaits();
      for (const { delivery } of this.held.splice(0)) void delivery.nak().catch(() => undefined);
    }, PARKED_WAIT_MS);
    // Only guards a fetch that never comes: never keeps a finished process alive.
    this.parkedTimer.unref?.();
  }

  private unpark(): void {
    clearTimeout(this.parkedTimer);
    this.parkedTimer = undefined;
  }

  /** Ends every wait under way; what they still bring is held (and nakked if nobody fetches). */
  private endWaits(): void {
    this.waitsEnd.abort();
    this.waitsEnd = new AbortController();
  }

  /** Moves the cycle on and orders the batch highest level first (invariants 1 and 2). */
  private handOut(claimed: Claimed[]): Delivery[] {
    this.position = (this.position + claimed.length) % PRIORITY_CYCLE.length;
    return claimed.sort((a, b) => priorityRank(a.level) - priorityRank(b.level)).map((c) => c.delivery);
  }
}
