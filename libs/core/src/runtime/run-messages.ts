/**
 * The run messages as they go onto the run queue, built in one place for the client and the
 * worker: each constructor returns the encoded message with the enqueue options it must travel
 * with (its de-duplication id, its partitioning key, whether it may stay local).
 *
 * Why the options live here and not with each sender: they are part of what a message means. A
 * start's id `start:<runId>` makes a repeated start a no-op on the bus; a signal's
 * `signal:<runId>:<signalId>` delivers a redelivered signal once; a resume or wake has no id,
 * because a second one must never be dropped (the first may have been taken by a worker that then
 * died). Every message is keyed by its run id, so a partitioning bus keeps one run's messages in
 * order. Only a start carries a priority: resume, wake, signal and cancel messages of any run go in
 * the default lane (docs/priorities.md says why).
 */
import { ConfigError } from '../shared/errors.js';
import { PROMISE_SIGNAL } from '../author/promise.js';
import { encodeMessage } from './codec.js';
import type { EnqueueOptions, RunQueue } from '../adapter/contracts/transport.js';
import { DEFAULT_RUN_PRIORITY, checkRunPriority } from '../adapter/priority.js';
import type { CancelMessage, ResumeMessage, SignalMessage, StartMessage, WakeMessage } from './messages.js';

/** A run message ready for {@link RunQueue.enqueue}. */
export interface OutgoingRunMessage {
  data: Uint8Array;
  options: EnqueueOptions;
}

/** The fields of a start message; `enqueuedAt` defaults to now. */
export type StartMessageFields = Omit<StartMessage, 'kind' | 'enqueuedAt'> & { enqueuedAt?: number };

/**
 * Starts a run (client.start, client.timeTravel.fork). Deduplicated by run id. A priority other than the
 * default puts it in that lane of the run queue; `'normal'` is left out of the message and the
 * options, so a default start is byte for byte what it was before priorities.
 */
export function startMessage(fields: StartMessageFields): OutgoingRunMessage {
  const { priority, ...rest } = fields;
  const checked = checkRunPriority(priority, 'start message');
  const prioritised = checked !== undefined && checked !== DEFAULT_RUN_PRIORITY ? checked : undefined;
  const message: StartMessage = {
    kind: 'start',
    ...rest,
    enqueuedAt: fields.enqueuedAt ?? Date.now(),
    ...(prioritised !== undefined ? { priority: prioritised } : {}),
  };
  const options: EnqueueOptions = { msgId: `start:${fields.runId}`, key: fields.runId };
  if (prioritised !== undefined) options.priority = prioritised;
  return { data: encodeMessage(message), options };
}

/**
 * Delivers a signal (client.signal). Deduplicated by its signal id. The name completions of
 * durable promises use is refused (ConfigError): those enter a run's inbox only through the store's
 * `promises.complete` (core's author/promise.ts, invariant 4).
 */
export function signalMessage(fields: Omit<SignalMessage, 'kind'>): OutgoingRunMessage {
  if (fields.name === PROMISE_SIGNAL) {
    throw new ConfigError(
      `signal name '${PROMISE_SIGNAL}' is reserved for the completions of durable promises: complete one ` +
        'with client.promises.resolve(token, value) or reject(token, error)',
    );
  }
  const message: SignalMessage = { kind: 'signal', ...fields };
  return {
    data: encodeMessage(message),
    options: { msgId: `signal:${fields.runId}:${fields.signalId}`, key: fields.runId },
  };
}

/** Requests a run's cancellation (client.cancel). */
export function cancelMessage(runId: string, reason: string): OutgoingRunMessage {
  const message: CancelMessage = { kind: 'cancel', runId, reason };
  return { data: encodeMessage(message), options: { key: runId } };
}

/**
 * Asks any worker to resume a run: after a hand-off, a reaped lease, or a client's retry. A
 * reaping worker keeps the message `local`: on a partitioned bus it lands where that live worker
 * reads, not on a partition the dead worker may still hold. The others do not: a leaving worker
 * reads no more, and a client reads nothing.
 */
export function resumeMessage(
  runId: string,
  reason: ResumeMessage['reason'],
  since = Date.now(),
): OutgoingRunMessage {
  const message: ResumeMessage = { kind: 'resume', runId, reason, since };
  return { data: encodeMessage(message), options: { key: runId, local: reason === 'reaped' } };
}

/**
 * Asks any worker to wake a suspended run: a timer came due (found by a worker's scan, so kept
 * local like a reap), a signal or a cancel arrived, or a paused run was resumed.
 */
export function wakeMessage(runId: string, reason: WakeMessage['reason']): OutgoingRunMessage {
  const message: WakeMessage = { kind: 'wake', runId, reason };
  return { data: encodeMessage(message), options: { key: runId, local: reason === 'timer' } };
}

/** Puts `message` on `queue`; resolves once the bus has it durably. */
export function sendRunMessage(queue: RunQueue, message: OutgoingRunMessage): Promise<void> {
  return queue.enqueue(message.data, message.options);
}
