/**
 * The messages workers send each other through the run queue: hand-offs, reaps and wakes. Their
 * shape, ids and keys are @baton/core's run-message constructors, the ones the client uses too;
 * these two only send them.
 */
import type { RunQueue } from '@baton/core/adapter';
import {
  resumeMessage,
  sendRunMessage,
  wakeMessage,
  type ResumeMessage,
  type WakeMessage,
} from '@baton/core/runtime';

/** Asks any worker to resume a run (after a hand-off or a reaped lease); see `resumeMessage`. */
export function enqueueResume(
  queue: RunQueue,
  runId: string,
  reason: ResumeMessage['reason'],
): Promise<void> {
  return sendRunMessage(queue, resumeMessage(runId, reason));
}

/** Asks any worker to wake a suspended run (a timer came due, a signal or cancel arrived). */
export function enqueueWake(queue: RunQueue, runId: string, reason: WakeMessage['reason']): Promise<void> {
  return sendRunMessage(queue, wakeMessage(runId, reason));
}

/** Redelivery delay after the n-th failed delivery: doubling from `baseMs`, capped at `capMs`. */
export function redeliveryDelayMs(deliveryCount: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** deliveryCount);
}
