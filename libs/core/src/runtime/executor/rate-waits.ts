/**
 * Rate-limited steps (the executor's invariant 8): a step asks the store for a place under its
 * limit before each live attempt, and a refused step waits until the time the store said.
 * 1. Only a live attempt asks, never a step history settled. A host that cannot ask, or a key
 *    function that fails, is a ConfigError (the run fails): a declared limit is never skipped.
 * 2. A wait is neither journaled nor a step: it takes no sequence number and leaves nothing a
 *    replay could disagree with, since the step itself is journaled only once it has run. A crash
 *    mid-wait loses nothing: the step is live again on resume and asks again.
 * 3. An ask is work in flight for the run's loop; a wait is not, so the run may suspend, or wait
 *    in process with its worker slot lent, while only waits remain.
 * 4. A store that fails an ask stops the run (it resumes later), as a failed journal append does.
 * 5. A first attempt's refusal parks the step here until the run's loop asks again (askDue); a
 *    retry (or a freshness re-run) sleeps in process instead, holding the run's slot as the
 *    retry's backoff does.
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { RateLimitRequest } from '../../adapter/contracts/rate-limits.js';
import { ConfigError } from '../../shared/errors.js';
import { CancelledError } from '../../author/errors.js';
import { rateLimitRequest } from '../../author/rate-limit.js';
import type { ActivityDefinition } from '../../author/workflow.js';
import type { ExecutionHost } from './execution-host.js';
import type { LoopWake } from './loop-wake.js';

/** What the waits need of their run (the executor). */
export interface RateRun {
  readonly runId: string;
  readonly host: ExecutionHost;
  /** The run's activity signal: aborted on cancel, lease loss or finish. */
  readonly signal: AbortSignal;
  /** Wakes the run's loop. */
  readonly wake: LoopWake;
  /** True while a step may start here: the run is neither frozen nor stopped, and has not failed. */
  isRunning(): boolean;
  /** The pending cancel's reason, undefined with none. */
  cancelReason(): string | undefined;
  /** Adds `delta` to the run's count of work in flight. */
  countInFlight(delta: number): void;
  /** Stops the run at once. */
  abort(cause: unknown): void;
}

/** A step the store refused, waiting to ask again. */
interface RateWait {
  /** When to ask again, on the host's clock. */
  askAt: number;
  /** Asks the store again (the step's gate). */
  ask(): void;
  /** Rejects the step's promise (a cancel). */
  reject(error: unknown): void;
}

export class RateWaits {
  private readonly waits = new Map<number, RateWait>();

  constructor(private readonly run: RateRun) {}

  get size(): number {
    return this.waits.size;
  }

  /** The store request of a live call of `def`, undefined without a limit (invariant 1). */
  request<I>(def: ActivityDefinition<I, unknown>, input: I): RateLimitRequest | undefined {
    if (def.rateLimit === undefined) return undefined;
    if (this.run.host.takeRateToken === undefined) {
      throw new ConfigError(
        `activity ${def.name} has a rate limit, and this host cannot ask a store for a place under it`,
      );
    }
    return rateLimitRequest(def.name, def.rateLimit, input);
  }

  /**
   * Calls `start` (a step's first attempt, which counts itself as work in flight) once the store
   * grants a place; a refusal parks the step until the time the store said (invariant 5).
   */
  gate<O>(seq: number, request: RateLimitRequest, start: () => Promise<O>): Promise<O> {
    const run = this.run;
    return new Promise<O>((resolve, reject) => {
      const ask = (): void => {
        // Frozen or stopped: the step never starts here; a resumed run asks again.
        if (!run.isRunning()) return;
        let reason = run.cancelReason();
        if (reason !== undefined) {
          reject(new CancelledError(run.runId, reason));
          return;
        }
        run.countInFlight(1);
        run.host.takeRateToken!(request).then(
          (answer) => {
            reason = run.cancelReason();
            if (reason !== undefined) {
              reject(new CancelledError(run.runId, reason));
            } else if (run.isRunning()) {
              // start() counts the step as in flight before the ask stops counting.
              if (answer.granted) start().then(resolve, reject);
              else this.waits.set(seq, { askAt: run.host.clock() + answer.waitMs, ask, reject });
            }
            run.countInFlight(-1);
            run.wake.notify();
          },
          (err: unknown) => {
            run.countInFlight(-1);
            run.abort(err);
          },
        );
      };
      ask();
    });
  }

  /**
   * Before a retry (and a freshness re-run): asks until the store grants a place, sleeping in
   * process each time for as long as it said. Rejects with the run's abort reason when it stops
   * meanwhile.
   */
  async waitForPlace(request: RateLimitRequest): Promise<void> {
    const { signal } = this.run;
    for (;;) {
      signal.throwIfAborted();
      let answer;
      try {
        answer = await this.run.host.takeRateToken!(request);
      } catch (err) {
        this.run.abort(err);
        throw err;
      }
      if (answer.granted) return;
      await sleepFor(answer.waitMs, undefined, { signal, ref: false }).catch(() => {
        throw signal.reason;
      });
    }
  }

  /** Asks again for the parked steps due at `now`, in step order; false when none was due. */
  askDue(now: number): boolean {
    if (this.waits.size === 0) return false;
    const due: RateWait[] = [];
    for (const [seq, wait] of [...this.waits].sort((a, b) => a[0] - b[0])) {
      if (wait.askAt > now) continue;
      this.waits.delete(seq);
      due.push(wait);
    }
    for (const wait of due) wait.ask();
    return due.length > 0;
  }

  /** The earliest time a parked step asks again, or null with none. */
  earliest(): number | null {
    let earliest: number | null = null;
    for (const wait of this.waits.values())
      if (earliest === null || wait.askAt < earliest) earliest = wait.askAt;
    return earliest;
  }

  /**
   * The run's short wait in process (`wait`), its worker slot lent meanwhile when steps are parked
   * here (invariant 3). False, having waited for nothing, when the host lends no more slots: the
   * run suspends instead.
   */
  async waitInProcess(wait: () => Promise<void>): Promise<boolean> {
    const takeBack = this.waits.size > 0 ? this.run.host.lendSlot?.() : undefined;
    if (takeBack === undefined && this.waits.size > 0 && this.run.host.lendSlot !== undefined) return false;
    await wait();
    await takeBack?.();
    return true;
  }

  /** Rejects and forgets every parked step (a cancel). */
  rejectAll(error: unknown): void {
    for (const wait of this.waits.values()) wait.reject(error);
    this.waits.clear();
  }
}
