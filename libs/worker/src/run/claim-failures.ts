/**
 * What a worker does when a claimed run's session throws (docs/operations.md, "A run failed after
 * repeated resume failures"). Without this, the run stays `running`, its lease runs out, the reaper
 * hands it to the next worker, and the same error happens again, for ever.
 *
 * Invariants:
 * 1. The success path writes nothing: a failed claim is recorded on the run, under the claim's
 *    epoch, and failures count as consecutive only when their epochs are (the store's
 *    leases.recordClaimFailure). A claim that went well in between breaks the chain by itself.
 * 2. A failure is recorded only under the claim's own epoch (fenced): a worker that lost the lease
 *    records nothing and leaves the run to its new owner.
 * 3. After `maxResumeFailures` in a row the run is failed once, with ResumeFailedError carrying the
 *    last error; before that it is suspended with a timer `min(cap, base * 2^(n-1))` ahead, so the
 *    next claim waits instead of coming round at lease speed. A child's end (failed, or cancelled
 *    when a cancel was pending) is sent to its parent before it is recorded, as a session's is.
 * 4. Errors that are not the run's fault are not counted and take the old path (the lease runs
 *    out, the reaper hands the run on): a lost lease or a fenced write (someone else owns the run),
 *    a journal conflict (another writer appended), the worker's own shutdown, and an unavailable
 *    server (a retryable error: the store may not be reachable to record anything, and a bus
 *    outage must not fail runs that are fine).
 */
import { FencedWriteError, JournalConflictError } from '@baton/core/adapter';
import { BatonError } from '@baton/core';
import type { RunOutcome } from '@baton/core/adapter';
import { sealOutcome, serializeError, LeaseLostError, ResumeFailedError } from '@baton/core/runtime';
import { ATTR, type WorkerInstruments } from '@baton/telemetry';
import type { ResolvedWorkerOptions } from '../options.js';
import { reportEndToParentOf } from './run-links.js';

/** What recording a failed claim uses of the worker's options. */
export type ClaimFailureOptions = Pick<
  ResolvedWorkerOptions,
  | 'store'
  | 'transport'
  | 'logger'
  | 'onEvent'
  | 'payloadProtection'
  | 'claimCheck'
  | 'maxResumeFailures'
  | 'resumeBackoffMs'
  | 'resumeBackoffMaxMs'
>;

/** What became of a claim whose session threw. */
export type ClaimFailureEnd = 'not-counted' | 'backoff' | 'failed' | 'cancelled';

/** Whether `err`, thrown by a claimed run's session, counts as a failure of the run's resume. */
export function countsAsResumeFailure(err: unknown): boolean {
  if (err instanceof LeaseLostError || err instanceof FencedWriteError) return false;
  if (err instanceof JournalConflictError) return false;
  if (err instanceof BatonError && (err.retryable || err.code === 'BATON_SHUTDOWN')) return false;
  return true;
}

/** The wait before the claim after the n-th failure in a row: `min(cap, base * 2^(n-1))`. */
export function resumeBackoffMs(failures: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, failures - 1));
}

/**
 * Records the failed claim and fails or suspends the run; 'not-counted' when the error is not the
 * run's (the caller logs it as before). Throws only if the store cannot be reached to record it.
 */
export async function handleClaimFailure(
  err: unknown,
  runId: string,
  epoch: number,
  options: ClaimFailureOptions,
  instruments: WorkerInstruments,
  /** The store's time as this worker estimates it (store-clock.ts): the timer is compared with it. */
  storeNow: () => number,
): Promise<ClaimFailureEnd> {
  if (!countsAsResumeFailure(err)) return 'not-counted';
  const { store, logger, maxResumeFailures, resumeBackoffMs: baseMs, resumeBackoffMaxMs } = options;
  let failures: number;
  try {
    failures = await store.leases.recordClaimFailure(runId, epoch);
  } catch (recordErr) {
    if (recordErr instanceof FencedWriteError) return 'not-counted';
    throw recordErr;
  }
  const reason = (err as Error)?.message ?? String(err);
  if (failures >= maxResumeFailures) {
    instruments.resumeFailures.add(1, { [ATTR.outcome]: 'failed' });
    const error = new ResumeFailedError(runId, failures, reason, { cause: err });
    logger.error(
      { runId, epoch, failures, code: error.code, err },
      `run ${runId} failed: its resume failed on ${failures} claims in a row; it is not tried again`,
    );
    options.onEvent({ type: 'resume-failed', runId, epoch, failures, final: true, reason });
    const outcome: RunOutcome = { status: 'failed', error: serializeError(error) };
    await reportEndToParentOf(options, runId, outcome);
    await store.runs.finish(runId, epoch, sealOutcome(outcome, runId, options.payloadProtection));
    return 'failed';
  }
  instruments.resumeFailures.add(1, { [ATTR.outcome]: 'backoff' });
  const delayMs = resumeBackoffMs(failures, baseMs, resumeBackoffMaxMs);
  logger.warn(
    { runId, epoch, failures, maxResumeFailures, retryInMs: delayMs, err },
    `run ${runId}: resume failed (${failures} of ${maxResumeFailures} in a row); tried again in ${delayMs} ms`,
  );
  options.onEvent({ type: 'resume-failed', runId, epoch, failures, final: false, reason });
  const wakeAt = storeNow() + delayMs;
  const suspended = await store.leases.suspend({ runId, epoch, wakeAt, signals: [], consumedSignalIds: [] });
  if (suspended.ok) return 'backoff';
  // A cancel is pending: honour it rather than resume a run that keeps failing.
  const cancelled: RunOutcome = {
    status: 'cancelled',
    error: { name: 'CancelledError', message: 'cancelled while its resume was failing' },
  };
  await reportEndToParentOf(options, runId, cancelled);
  await store.runs.finish(runId, epoch, sealOutcome(cancelled, runId, options.payloadProtection));
  return 'cancelled';
}
