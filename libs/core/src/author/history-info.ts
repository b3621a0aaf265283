/**
 * Bounded histories: how large a run's journal may grow, and what a workflow learns of its size
 * (`ctx.historyInfo()`), so a long loop continues as new before a resume has too much to read.
 *
 * Every resume replays the run's effective history, and every checkpoint rewrites it whole, so a
 * history that grows without end makes each resume and each checkpoint slower than the last. A
 * worker warns at the soft limit (once per run on that worker; the console flags the run) and,
 * at the hard limit, refuses every further entry but the run's end: the run fails with
 * {@link HistoryLimitError}, which names `ctx.continueAsNew` (docs/continue-as-new.md, "Bounded
 * histories").
 *
 * Invariants:
 * 1. `ctx.historyInfo()` is a step, like `ctx.now()`: its value is read from the run's journal
 *    writer (the effective entries and their encoded bytes, as durable at the call) and journaled,
 *    so every replay returns the values the first execution saw at that point, whatever worker,
 *    limits or timing the replay has.
 * 2. The end of a run (RunCompleted, RunFailed, RunCancelled) is never refused for the size of its
 *    history: a run at its hard limit may still continue as new, and still fails with the error.
 */
import { BatonError } from '../shared/errors.js';

export type { HistoryInfo } from '../shared/journal.js';

/** The soft and hard limits on a run's history; a limit of 0 is off. */
export interface HistoryLimits {
  /** Warn (once per run per worker), flag the run on the console, and suggest continuing as new. */
  softEntries: number;
  softBytes: number;
  /** Fail the run with {@link HistoryLimitError} at its next entry. */
  maxEntries: number;
  maxBytes: number;
}

/**
 * The defaults (docs/continue-as-new.md explains the choice): a soft limit of 10,000 entries or
 * 10 MiB, a hard limit of 50,000 entries or 50 MiB.
 */
export const DEFAULT_HISTORY_LIMITS: Readonly<HistoryLimits> = Object.freeze({
  softEntries: 10_000,
  softBytes: 10 * 1024 * 1024,
  maxEntries: 50_000,
  maxBytes: 50 * 1024 * 1024,
});

/**
 * A run's history reached its hard limit: it fails rather than grow further. Never retryable: a
 * resume would replay the same history. The fix is in the workflow's code (continue as new).
 */
export class HistoryLimitError extends BatonError {
  constructor(
    readonly runId: string,
    /** Which limit: the number of entries or their bytes. */
    readonly limit: 'entries' | 'bytes',
    readonly length: number,
    readonly bytes: number,
    readonly max: number,
  ) {
    const variable = limit === 'entries' ? 'BATON_HISTORY_MAX_ENTRIES' : 'BATON_HISTORY_MAX_BYTES';
    const size = limit === 'entries' ? `${length} entries` : `${bytes} bytes`;
    super(
      'BATON_HISTORY_LIMIT',
      `run ${runId}: its history reached ${size}, the hard limit of ${max} (${variable}); ` +
        'end the run with `return ctx.continueAsNew(next)` before that (check ctx.historyInfo().suggested ' +
        'in the loop), or raise the limit (docs/continue-as-new.md, "Bounded histories")',
    );
  }
}
