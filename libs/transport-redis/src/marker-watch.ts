/**
 * Wake-ups for waiting fetches. BullMQ marks its queue's `marker` sorted set whenever a job becomes
 * available (member `0`, score 0) or a delayed job is next due (member `1`, score its due time).
 * One blocking connection per transport pops the marker (BZPOPMIN) for all of its waiting fetches,
 * so a job added by any producer wakes a waiting worker at once instead of at its next poll.
 *
 * Invariants:
 * 1. Best effort only: fetches keep polling every `pollMs` beside it, so a marker another worker
 *    popped, a dropped blocking connection or a burst under one marker costs at most one poll
 *    period, as without it. Nothing here decides what is delivered; it only says "look now".
 * 2. At most one BZPOPMIN in flight per transport, each bounded by `maxBlockMs`; close() ends it.
 * 3. A delayed job's marker does not wake anyone before it is due: after popping one whose time is
 *    ahead, the watch waits until then (bounded), so a far delay never turns into a busy loop.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';

/** Pause after a failed BZPOPMIN (connection down): polling covers meanwhile. */
const RETRY_AFTER_FAILURE_MS = 250;

export class MarkerWatch {
  private blocking: Redis | undefined;
  private waiting: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly source: Redis,
    private readonly markerKey: string,
    private readonly maxBlockMs: number,
  ) {}

  /** Resolves when a job may have become available, or after at most about `maxBlockMs`. Never rejects. */
  next(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.waiting ??= this.pop().finally(() => {
      this.waiting = undefined;
    });
    return this.waiting;
  }

  private async pop(): Promise<void> {
    try {
      // A connection ioredis ended by itself (a race of its Sentinel failover detector, see
      // reviveEndedRedis in @baton/redis-kit) is replaced, or every later pop would fail.
      if (this.blocking?.status === 'end') {
        this.blocking.disconnect();
        this.blocking = undefined;
      }
      // A connection of its own: a blocked command holds its connection (invariant 2).
      this.blocking ??= this.source.duplicate();
      const reply = await this.blocking.bzpopmin(this.markerKey, this.maxBlockMs / 1_000);
      if (reply === null) return;
      const ahead = Number(reply[2]) - Date.now();
      // Invariant 3.
      if (ahead > 0 && !this.closed) await sleep(Math.min(ahead, this.maxBlockMs));
    } catch {
      if (!this.closed) await sleep(RETRY_AFTER_FAILURE_MS);
    }
  }

  /** Ends the blocking call and its connection; next() resolves at once from now on. */
  close(): void {
    this.closed = true;
    this.blocking?.disconnect();
  }
}
