/**
 * A run queue's fetch over one lane per priority level (priority.ts states the policy). Each
 * transport keeps a lane per level (memory: a queue; NATS: a stream and consumer; Kafka: a topic)
 * and hands this class one fetch function per lane; the choosing lives here, once, with no I/O.
 *
 * Invariants:
 * 1. A fetch returns at most `max` deliveries, highest level first.
 * 2. Claims follow {@link PRIORITY_CYCLE}: the cycle moves on by the number of deliveries returned,
 *    and a slot whose level has nothing ready goes to the highest level that has.
 * 3. Messages ready on any lane are returned without waiting. Only when every lane is empty does a
 *    fetch wait, on all lanes at once, and the first lane to deliver ends the wait for the others.
 * 4. What lanes deliver beyond `max` while waiting (two lanes answering in the same instant) is
 *    held and returned first by the next fetch, never dropped. Held deliveries are not acked or
 *    nakked by anyone: a fetcher that is never asked again leaves them to the bus's ack wait, which
 *    redelivers them, as it does for a consumer that dies with a batch in hand.
 * 5. A lane found empty may be skipped, while other lanes supply the fetch, for `emptyRecheckMs`
 *    (a bus where asking an empty lane costs a round trip): a message arriving there meanwhile is
 *    found within that time, or at once when the other lanes run dry (invariant 3).
 */
import type { Delivery, FetchOptions } from './contracts/transport.js';
import { PRIORITY_CYCLE, RUN_PRIORITIES, planClaims, priorityRank, type RunPriority } from './priority.js';

/** One lane's fetch: the transport's fetch for the queue of one level. */
export type LaneFetch = (options: FetchOptions) => Promise<Delivery[]>;

interface Claimed {
  level: RunPriority;
  delivery: Delivery;
}

/** Chooses among the lanes of a prioritised run queue; see the invariants above. */
export class PriorityLanes {
  /** The next slot of {@link PRIORITY_CYCLE}. */
  private position = 0;
  /** Per level, until when it counts as empty (invariant 5). */
  private readonly emptyUntil = new Map<RunPriority, number>();
  /** Deliveries beyond a waiting fetch's `max` (invariant 4). */
  private held: Claimed[] = [];

  constructor(
    private readonly lanes: Readonly<Record<RunPriority, LaneFetch>>,
    /** How long a lane found empty is skipped while others supply the fetch; 0 asks every time. */
    private readonly emptyRecheckMs = 0,
  ) {}

  async fetch(options: FetchOptions): Promise<Delivery[]> {
    const max = Math.floor(options.max);
    if (max < 1) return [];
    const claimed = this.held.splice(0, max);
    if (claimed.length < max) claimed.push(...(await this.takeReady(max - claimed.length)));
    if (claimed.length > 0 || options.expiresMs <= 0 || options.signal?.aborted) {
      return this.handOut(claimed);
    }
    return this.handOut(await this.waitOnAll(options, max));
  }

  /** Deliveries ready now, per the cycle (invariant 2), without waiting. */
  private async takeReady(max: number): Promise<Claimed[]> {
    const now = Date.now();
    const skipped = new Set(RUN_PRIORITIES.filter((p) => (this.emptyUntil.get(p) ?? 0) > now));
    if (skipped.size === RUN_PRIORITIES.length) skipped.clear();
    const plan = planClaims(this.position, max, skipped);
    const claimed: Claimed[] = [];
    const exhausted = new Set<RunPriority>(skipped);
    const take = async (level: RunPriority, count: number): Promise<void> => {
      const batch = await this.lanes[level]({ max: count, expiresMs: 0 });
      for (const delivery of batch) claimed.push({ level, delivery });
      if (batch.length < count) exhausted.add(level);
      if (batch.length === 0 && this.emptyRecheckMs > 0)
        this.emptyUntil.set(level, now + this.emptyRecheckMs);
      else if (batch.length > 0) this.emptyUntil.delete(level);
    };
    for (const level of RUN_PRIORITIES) {
      if (plan[level] > 0 && !skipped.has(level)) await take(level, plan[level]);
    }
    // Slots of levels that ran short go to the highest level that may have more.
    for (const level of RUN_PRIORITIES) {
      const left = max - claimed.length;
      if (left === 0) break;
      if (!exhausted.has(level)) await take(level, left);
    }
    return claimed;
  }

  /** Every lane was empty: waits on all of them, the first to deliver ends it (invariant 3). */
  private async waitOnAll(options: FetchOptions, max: number): Promise<Claimed[]> {
    const stop = new AbortController();
    const signal =
      options.signal === undefined ? stop.signal : AbortSignal.any([options.signal, stop.signal]);
    const results = await Promise.allSettled(
      RUN_PRIORITIES.map(async (level) => {
        try {
          const batch = await this.lanes[level]({ max, expiresMs: options.expiresMs, signal });
          if (batch.length > 0) stop.abort();
          return batch.map((delivery): Claimed => ({ level, delivery }));
        } catch (err) {
          stop.abort();
          throw err;
        }
      }),
    );
    const claimed: Claimed[] = [];
    let failure: unknown;
    for (const result of results) {
      if (result.status === 'fulfilled') claimed.push(...result.value);
      else failure ??= result.reason;
    }
    claimed.sort((a, b) => priorityRank(a.level) - priorityRank(b.level));
    for (const { level } of claimed) this.emptyUntil.delete(level);
    this.held.push(...claimed.splice(max));
    if (claimed.length === 0 && failure !== undefined) throw failure;
    return claimed;
  }

  /** Moves the cycle on and orders the batch highest level first (invariants 1 and 2). */
  private handOut(claimed: Claimed[]): Delivery[] {
    this.position = (this.position + claimed.length) % PRIORITY_CYCLE.length;
    return claimed.sort((a, b) => priorityRank(a.level) - priorityRank(b.level)).map((c) => c.delivery);
  }
}
