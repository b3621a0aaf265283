/**
 * Progress lines of a bulk action, on stderr (at most one a second, and the last one), and how a
 * bulk action ends: its exit code and, when Ctrl-C stopped it, how much is left.
 */
import type { BulkProgress, BulkSummary } from '@baton/client';
import { EXIT, type ExitCode } from '../errors.js';
import type { Io } from '../output.js';

/** An `onProgress` that writes `retry: 40/120 (38 done, 2 refused, 0 failed)` lines to stderr. */
export function bulkProgress(
  io: Io,
  action: string,
  expected: number | undefined,
  everyMs = 1_000,
): (progress: BulkProgress) => void {
  let last = 0;
  return (p) => {
    const now = Date.now();
    const final = expected !== undefined && p.done >= expected;
    if (!final && now - last < everyMs) return;
    last = now;
    const of = expected === undefined ? `${p.done}` : `${p.done}/${expected}`;
    io.err(`${action}: ${of} (${p.succeeded} done, ${p.refused} refused, ${p.failed} failed)\n`);
  };
}

/**
 * The exit code of a finished bulk action: 130 when it was interrupted (after a line on stderr
 * saying how many of the `counted` items were not reached and how to finish), else 1 when any
 * item was refused or failed, else 0. An interrupted walk never exits 0: a script must not take
 * it for a whole one.
 */
export function bulkExit(io: Io, summary: BulkSummary, counted: number, noun: string): ExitCode {
  if (summary.interrupted) {
    // `counted` was taken before the walk; items that started or stopped matching since make the
    // true rest differ a little, so the line names the count it is measured against.
    const remaining = Math.max(0, counted - summary.matched);
    io.err(
      `interrupted: ${summary.matched} of ${counted} ${noun}(s) handled, ${remaining} remain; ` +
        'run the same command again to finish (every action is safe to repeat)\n',
    );
    return EXIT.interrupted;
  }
  return summary.refused.length + summary.failed.length === 0 ? EXIT.done : EXIT.refused;
}
