/** The messages workers send each other through the run queue: hand-offs, reaps and wakes. */
import { encodeMessage, type ResumeMessage, type RunQueue, type WakeMessage } from '@baton/core';

/** Asks any worker to resume a run (after a hand-off or a reaped lease). */
export function enqueueResume(
  queue: RunQueue,
  runId: string,
  reason: ResumeMessage['reason'],
): Promise<void> {
  return queue.enqueue(encodeMessage({ kind: 'resume', runId, reason, since: Date.now() }), { key: runId });
}

/** Asks any worker to wake a suspended run (a timer came due, a signal or cancel arrived). */
export function enqueueWake(queue: RunQueue, runId: string, reason: WakeMessage['reason']): Promise<void> {
  return queue.enqueue(encodeMessage({ kind: 'wake', runId, reason }), { key: runId });
}

/** Redelivery delay after the n-th failed delivery: doubling from `baseMs`, capped at `capMs`. */
export function redeliveryDelayMs(deliveryCount: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** deliveryCount);
}
