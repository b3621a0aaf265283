/**
 * Freshness re-runs (`maxAgeMs`) of replayed activity steps: a step registers its re-run when the
 * workflow calls it, and its journaled completion, when delivered, takes the re-run instead if
 * the result is older than `maxAgeMs`. While a re-run is under way (`running`) the executor
 * delivers no other completion (its invariant 7).
 */
import type { Settle } from './pending-waits.js';
import type { CompletionEntry } from './history.js';

/** A replayed activity step with `maxAgeMs`: re-run at delivery if its journaled result is older. */
export interface Refresh {
  maxAgeMs: number;
  run(): Promise<unknown>;
}

export class Refreshes {
  private readonly bySeq = new Map<number, Refresh>();
  /** A re-run is under way: no other completion is delivered until it settles. */
  running = false;

  register(seq: number, refresh: Refresh): void {
    this.bySeq.set(seq, refresh);
  }

  /** The re-run `entry` calls for at `now` (its result too old), if any; the step is forgotten either way. */
  take(entry: CompletionEntry, now: number): Refresh | undefined {
    const refresh = this.bySeq.get(entry.seq);
    this.bySeq.delete(entry.seq);
    const stale =
      refresh !== undefined && entry.type === 'ActivityCompleted' && entry.at < now - refresh.maxAgeMs;
    return stale ? refresh : undefined;
  }

  /**
   * Re-runs the step now and settles it with the new outcome while `live()` holds; `done` runs
   * once it settled either way.
   */
  runAt(refresh: Refresh, settle: Settle, live: () => boolean, done: () => void): void {
    this.running = true;
    refresh
      .run()
      .then(
        (value) => live() && settle.resolve(value),
        (error: unknown) => live() && settle.reject(error),
      )
      .finally(() => {
        this.running = false;
        done();
      });
  }
}
