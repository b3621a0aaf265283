/**
 * Poison messages: input that will never succeed is refused with a PoisonMessage naming why, and
 * dead-lettered with that reason, then acked; it never stops the claim loop (worker invariant 2).
 */
import { BatonError, CheckpointIntegrityError, MissingKeyError } from '@baton/core';
import { assertRunId, type Delivery } from '@baton/core/adapter';
import {
  decodeMessage,
  type ClaimCheck,
  type RunMessage,
  type SignalMessage,
  type StartMessage,
} from '@baton/core/runtime';
import { ATTR, type WorkerInstruments } from '@baton/telemetry';
import type { ResolvedWorkerOptions } from './options.js';

/** Thrown inside message handling for input that will never succeed: it is dead-lettered. */
export class PoisonMessage extends BatonError {
  constructor(
    readonly letterCode: string,
    message: string,
  ) {
    super('BATON_POISON', message);
  }
}

/** Decodes a run message; PoisonMessage when it is too large or not a valid run message. */
export function parseRunMessage(delivery: Delivery, maxMessageBytes: number): RunMessage {
  if (delivery.data.byteLength > maxMessageBytes) {
    throw new PoisonMessage(
      'too-large',
      `message of ${delivery.data.byteLength} bytes exceeds maxMessageBytes (${maxMessageBytes}); ` +
        'pass large inputs by reference or raise the limit',
    );
  }
  try {
    const message = decodeMessage(delivery.data);
    assertRunId(message.runId);
    return message;
  } catch (err) {
    throw new PoisonMessage('unparseable', (err as Error).message);
  }
}

/**
 * A start message's input or a signal message's payload: inline, or read back from the payload
 * store when the producer stored it by reference. Bytes that are missing or do not match their
 * hash make the message poison (`unreadable-payload`); a missing key or a store error is retried
 * by redelivery.
 */
export async function messageValue(
  claimCheck: ClaimCheck,
  message: StartMessage | SignalMessage,
): Promise<unknown> {
  const [inline, ref, label] =
    message.kind === 'start'
      ? [message.input, message.inputRef, 'start message input']
      : [message.payload, message.payloadRef, 'signal message payload'];
  if (ref === undefined) return inline;
  try {
    return await claimCheck.resolve(message.runId, ref, label);
  } catch (err) {
    if (err instanceof CheckpointIntegrityError && !(err instanceof MissingKeyError)) {
      throw new PoisonMessage('unreadable-payload', err.message);
    }
    throw err;
  }
}

/** Dead-letters the message with its reason and acks it; if that fails, it is redelivered. */
export async function deadLetterDelivery(
  delivery: Delivery,
  code: string,
  reason: string,
  options: Pick<ResolvedWorkerOptions, 'transport' | 'logger' | 'onEvent'>,
  instruments: WorkerInstruments,
  retryMs: number,
): Promise<void> {
  try {
    await options.transport.deadLetter({
      data: delivery.data,
      headers: delivery.headers,
      code,
      reason,
      at: Date.now(),
    });
    await delivery.ack();
    options.logger.warn({ code, reason }, 'message dead-lettered');
    instruments.deadLetters.add(1, { [ATTR.code]: code });
    options.onEvent({ type: 'dead-lettered', code, reason });
  } catch (err) {
    options.logger.error({ err, code }, 'dead-lettering failed; the message will be redelivered');
    await delivery.nak(retryMs).catch(() => undefined);
  }
}
