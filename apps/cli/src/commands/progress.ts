/** Progress lines of a bulk action, on stderr: at most one a second, and the last one. */
import type { BulkProgress } from '@baton/client';
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
