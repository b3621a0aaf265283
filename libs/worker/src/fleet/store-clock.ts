/**
 * The store's clock as this worker sees it: the local clock plus an estimated offset.
 *
 * Every time the worker writes for the store to compare (a timer's `wakeAt`, a signal wait's
 * `timeoutAt`, a retry timer) and every time it compares with a store time must be on the store's
 * clock: the store wakes a timer when its own clock passes `wakeAt`, so a worker whose clock runs
 * 30 s ahead would otherwise sleep 30 s too long, and one 30 s behind would be woken, find its timer
 * not yet due, and suspend again, over and over.
 *
 * Invariants:
 * 1. An estimate comes from one `store.now()` round trip: the store read its clock somewhere
 *    between sending and receiving, so its time belongs to the midpoint, give or take half the
 *    round trip (the estimate's uncertainty).
 * 2. A new sample replaces the estimate when it is at least as certain as the estimate (whose
 *    uncertainty grows with its age, for drift), or when the two disagree by more than both
 *    uncertainties together: then one of the clocks was stepped (NTP, a VM resumed), and only the
 *    new sample knows it.
 * 3. Reading the clock never calls the store: `now()` is local arithmetic, so no step pays for it.
 */
import type { LeaseStore } from '@baton/core/adapter';
import type { Logger } from '../logger.js';

/** How fast an estimate is assumed to go stale: 1 ms per second is generous for clock drift. */
const DRIFT_PER_MS = 0.001;
/** An offset between this worker's clock and the store's above this is logged as a warning. */
export const CLOCK_SKEW_WARN_MS = 1_000;
/**
 * How often the store's clock is measured again: one `now()` call per worker per period, so a
 * stepped clock (NTP, a resumed VM) is corrected within it.
 */
const CLOCK_REFRESH_MS = 5_000;
/**
 * At start, a sample less certain than this is measured again at once (up to
 * {@link START_SAMPLES} round trips in all), keeping the most certain. A first round trip slowed
 * by a busy start-up (connections still opening, modules loading, a loaded machine) is off by up
 * to half its length: 2 s off for a 4 s trip, which would stamp the first runs' journal entries
 * and timers 2 s wrong until the next refresh.
 */
export const PRECISE_START_MS = 50;
export const START_SAMPLES = 5;

/** One measurement of the store's clock against the local one. */
export interface ClockSample {
  /** Store time minus local time at the round trip's midpoint (ms). */
  offsetMs: number;
  /** Half the round trip: how far off the offset may be (ms). */
  uncertaintyMs: number;
  /** Local time of the midpoint. */
  takenAt: number;
}

export class StoreClock {
  private estimate: ClockSample | undefined;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param store where the store's time comes from (`now()`).
   * @param localClock this process's clock (ms since epoch); a test may skew it.
   */
  constructor(
    private readonly store: Pick<LeaseStore, 'now'>,
    private readonly localClock: () => number = Date.now,
  ) {}

  /**
   * The store's time now, as well as this worker knows it; the local clock before any sample.
   * Whole milliseconds: the stores keep times as integers (a Postgres bigint refuses a fraction).
   */
  now(): number {
    return Math.round(this.localClock() + (this.estimate?.offsetMs ?? 0));
  }

  /** The current estimate, or undefined before the first sample. */
  get sample(): ClockSample | undefined {
    return this.estimate;
  }

  /** Asks the store for its time once and folds the answer into the estimate; returns the estimate. */
  async measure(): Promise<ClockSample> {
    const sentAt = this.localClock();
    const storeNow = await this.store.now();
    const receivedAt = this.localClock();
    // A local clock stepped back during the call gives a negative round trip: count it as zero.
    const halfTrip = Math.max(0, receivedAt - sentAt) / 2;
    const takenAt = sentAt + halfTrip;
    this.accept({ offsetMs: storeNow - takenAt, uncertaintyMs: halfTrip, takenAt });
    return this.estimate!;
  }

  /**
   * Measures the store's clock (the worker calls this before its first claim), again while the
   * answer is too uncertain ({@link PRECISE_START_MS}), warns when the local clock is far off, then keeps the estimate fresh every {@link CLOCK_REFRESH_MS}, warning
   * when the offset jumps (a stepped clock).
   */
  async start(logger: Logger): Promise<void> {
    let first = await this.measure();
    for (let taken = 1; taken < START_SAMPLES && first.uncertaintyMs > PRECISE_START_MS; taken++) {
      first = await this.measure();
    }
    if (Math.abs(first.offsetMs) > CLOCK_SKEW_WARN_MS) {
      logger.warn(
        { storeClockOffsetMs: Math.round(first.offsetMs), uncertaintyMs: Math.round(first.uncertaintyMs) },
        `this worker's clock is ${describeOffset(first)} the store's; timers and journal times use the ` +
          "store's clock, so runs are not affected, but fix the machine's time sync (NTP) all the same",
      );
    }
    this.refreshEvery(
      CLOCK_REFRESH_MS,
      (before, after) => {
        if (before === undefined || Math.abs(after.offsetMs - before.offsetMs) <= CLOCK_SKEW_WARN_MS) return;
        logger.warn(
          { storeClockOffsetMs: Math.round(after.offsetMs), previousOffsetMs: Math.round(before.offsetMs) },
          `this worker's clock jumped: it is now ${describeOffset(after)} the store's; timers follow the store's clock`,
        );
      },
      (err) => logger.debug({ err }, "measuring the store's clock failed; the last estimate stays in use"),
    );
  }

  /** Takes `sample` when it is better than the estimate or contradicts it (invariant 2). */
  accept(sample: ClockSample): void {
    const current = this.estimate;
    if (current === undefined) {
      this.estimate = sample;
      return;
    }
    const aged = current.uncertaintyMs + Math.abs(sample.takenAt - current.takenAt) * DRIFT_PER_MS;
    const contradicts = Math.abs(sample.offsetMs - current.offsetMs) > aged + sample.uncertaintyMs;
    if (contradicts || sample.uncertaintyMs <= aged) this.estimate = sample;
  }

  /**
   * Measures again every `intervalMs` until {@link stop}: one `now()` per interval per worker, so a
   * stepped clock is noticed within an interval. `onMeasured` sees the estimate before and after;
   * a failed call goes to `onError` and the estimate stays as it was.
   */
  refreshEvery(
    intervalMs: number,
    onMeasured: (before: ClockSample | undefined, after: ClockSample) => void,
    onError: (err: unknown) => void,
  ): void {
    this.stop();
    const tick = (): void => {
      this.timer = setTimeout(() => {
        const before = this.estimate;
        this.measure()
          .then((after) => onMeasured(before, after), onError)
          .finally(() => {
            if (this.timer !== undefined) tick();
          });
      }, intervalMs);
      this.timer.unref();
    };
    tick();
  }

  /** Stops the refreshes; the last estimate stays in use. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** "1234 ms ahead of" / "1234 ms behind": how the worker's clock stands to the store's. */
function describeOffset(sample: ClockSample): string {
  const ms = Math.round(Math.abs(sample.offsetMs));
  // offset = store - local: a negative offset means the local clock reads later.
  return sample.offsetMs < 0 ? `${ms} ms ahead of` : `${ms} ms behind`;
}
