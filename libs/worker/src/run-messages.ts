/** The messages workers send each other through the run queue: hand-offs, reaps and wakes. */
import { encodeMessage, type ResumeMessage, type RunQueue, type WakeMessage } from '@baton/core';

/**
 * Asks any worker to resume a run (after a hand-off or a reaped lease). A reaping worker keeps the
 * message `local`: on a partitioned bus it lands where that live worker reads, not on a partition
 * the dead worker may still hold. A hand-off does not: the leaving worker reads no more.
 */
export function enqueueResume(
  queue: RunQueue,
  runId: string,
  reason: ResumeMessage['reason'],
): Promise<void> {
  return queue.enqueue(encodeMessage({ kind: 'resume', runId, reason, since: Date.now() }), {
    key: runId,
    local: reason === 'reaped',
  });
}

/** Asks any worker to wake a suspended run (a timer came due, a signal or cancel arrived). */
export function enqueueWake(queue: RunQueue, runId: string, reason: WakeMessage['reason']): Promise<void> {
  return queue.enqueue(encodeMessage({ kind: 'wake', runId, reason }), {
    key: runId,
    local: reason === 'timer',
  });
}

/** Redelivery delay after the n-th failed delivery: doubling from `baseMs`, capped at `capMs`. */
export function redeliveryDelayMs(deliveryCount: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** deliveryCount);
}
