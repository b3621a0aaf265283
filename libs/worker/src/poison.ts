/**
 * Poison messages: input that will never succeed is refused with a PoisonMessage naming why, and
 * dead-lettered with that reason, then acked; it never stops the claim loop (worker invariant 2).
 */
import { BatonError } from '@baton/core';
import { assertRunId, RUN_ID_PATTERN, type Delivery } from '@baton/core/adapter';
import {
  decodeMessage,
  encodeMessage,
  isSealedValue,
  openValue,
  PAYLOAD_ENV,
  sealsValues,
  sealValue,
  type PayloadProtection,
  type RunMessage,
  type SignalMessage,
  type StartMessage,
  CheckpointIntegrityError,
  MissingKeyError,
  PlaintextRefusedError,
} from '@baton/core/runtime';
import { ATTR, type WorkerInstruments } from '@baton/telemetry';
import type { ResolvedWorkerOptions } from './options.js';

/**
 * Every code the worker dead-letters with (here, in run-session.ts and unreadable-run.ts): the
 * dead-letter counter shows each at 0 from the start, so an alert on one has a series to watch.
 */
export const DEAD_LETTER_CODES = [
  'too-large',
  'unparseable',
  'unknown-workflow',
  'unknown-run',
  'unreadable-payload',
  'unprotected-payload',
  'repeated-failure',
  'unencodable',
  'unreadable-checkpoint',
  'integrity',
  'unreadable',
  'continuation-chain',
] as const;

/** Thrown inside message handling for input that will never succeed: it is dead-lettered. */
export class PoisonMessage extends BatonError {
  constructor(
    readonly letterCode: string,
    message: string,
  ) {
    super('BATON_POISON', message);
  }
}

/**
 * Run messages this worker made itself and handed to its own claim loop (a resume or wake the
 * maintenance scans found, claim-loop.ts `takeLocally`), by their delivery: the message object is
 * handed on as it is, with no encode-to-decode round trip. Weakly held: the entry goes with the
 * delivery.
 */
const LOCAL_MESSAGES = new WeakMap<Delivery, RunMessage>();

/**
 * A delivery for `message` taken locally (nothing came from the bus): `parseRunMessage` returns
 * the message itself, and its bytes are encoded only if something reads `data` (a dead letter).
 */
export function localDelivery(message: RunMessage, handling: Omit<Delivery, 'data' | 'headers'>): Delivery {
  let data: Uint8Array | undefined;
  const delivery: Delivery = {
    ...handling,
    headers: {},
    get data() {
      return (data ??= encodeMessage(message));
    },
  };
  LOCAL_MESSAGES.set(delivery, message);
  return delivery;
}

/** Decodes a run message; PoisonMessage when it is too large or not a valid run message. */
export function parseRunMessage(delivery: Delivery, maxMessageBytes: number): RunMessage {
  // Made by this worker from a run record it read: valid and small, as every message it enqueues.
  const local = LOCAL_MESSAGES.get(delivery);
  if (local !== undefined) return local;
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
 * A start message's input or a signal message's payload, in the form the store keeps: sealed when
 * this worker seals values (docs/integrity.md), else plain. Inline, sealed inline, or read back
 * from the payload store when the producer stored it by reference. The message is poison when its
 * value cannot be read: `unreadable-payload` when the bytes are missing, altered or do not verify,
 * `unprotected-payload` when it came in the clear to a worker that requires encryption (and does
 * not allow plaintext). A missing key or a store error is retried by redelivery.
 */
export async function messageValue(
  options: Pick<ResolvedWorkerOptions, 'claimCheck' | 'payloadProtection'>,
  message: StartMessage | SignalMessage,
): Promise<unknown> {
  const [inline, ref, label, purpose] =
    message.kind === 'start'
      ? [message.input, message.inputRef, 'start message input', 'run input' as const]
      : [message.payload, message.payloadRef, 'signal message payload', 'signal payload' as const];
  const protection = options.payloadProtection;
  try {
    if (ref !== undefined) {
      const value = await options.claimCheck.resolve(message.runId, ref, label).catch((err: unknown) => {
        // Stored in the clear by a producer without the keys: the same refusal as inline.
        throw err instanceof PlaintextRefusedError ? sentInTheClear(message.runId, label, protection) : err;
      });
      return sealValue(value, message.runId, purpose, protection, label);
    }
    if (isSealedValue(inline)) {
      // Verified now, kept sealed as it came: the store's copy is bound to the same run and purpose.
      openValue(inline, message.runId, purpose, protection, `${label} of run ${message.runId}`);
      return inline;
    }
    if (inline !== undefined && inline !== null && sealsValues(protection) && !protection.allowPlaintext) {
      throw sentInTheClear(message.runId, label, protection);
    }
    return sealValue(inline, message.runId, purpose, protection, label);
  } catch (err) {
    if (err instanceof PlaintextRefusedError) throw new PoisonMessage('unprotected-payload', err.message);
    if (err instanceof CheckpointIntegrityError && !(err instanceof MissingKeyError)) {
      throw new PoisonMessage('unreadable-payload', err.message);
    }
    throw err;
  }
}

/** A value its producer sent in the clear to a worker that requires encryption. */
function sentInTheClear(runId: string, label: string, protection: PayloadProtection): PlaintextRefusedError {
  return new PlaintextRefusedError(
    runId,
    label,
    `it came in the clear, but this worker requires encryption (key ${protection.encryption!.active.id}): ` +
      `its producer has no ${PAYLOAD_ENV.encryptionKeys}. Give the producer the fleet's keys and send it again ` +
      `(docs/integrity.md), or set ${PAYLOAD_ENV.allowPlaintext}=true on the workers while producers migrate`,
  );
}

/**
 * The run id a message names, for logging a dead letter: from the decoded message when it was
 * read, else from the raw JSON when it holds a string `runId` (an unparseable message may well).
 */
export function runIdOf(delivery: Delivery, message: RunMessage | undefined): string | undefined {
  if (message !== undefined) return message.runId;
  try {
    const raw = JSON.parse(new TextDecoder().decode(delivery.data)) as unknown;
    const runId = raw !== null && typeof raw === 'object' ? (raw as { runId?: unknown }).runId : undefined;
    // Only a well-formed id: the log line must not carry whatever a broken producer sent.
    return typeof runId === 'string' && RUN_ID_PATTERN.test(runId) ? runId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Dead-letters the message with its reason and acks it; if that fails, it is redelivered. This is
 * the one log line of the dead letter (with the run id when the message has one).
 */
export async function deadLetterDelivery(
  delivery: Delivery,
  letter: { code: string; reason: string; runId: string | undefined },
  options: Pick<ResolvedWorkerOptions, 'transport' | 'logger' | 'onEvent'>,
  instruments: WorkerInstruments,
  retryMs: number,
): Promise<void> {
  const { code, reason, runId } = letter;
  try {
    await options.transport.deadLetters.add({
      data: delivery.data,
      headers: delivery.headers,
      code,
      reason,
      at: Date.now(),
    });
    await delivery.ack();
    options.logger.warn(
      runId === undefined ? { code, reason } : { runId, code, reason },
      'message dead-lettered',
    );
    instruments.deadLetters.add(1, { [ATTR.code]: code });
    options.onEvent({ type: 'dead-lettered', code, reason, ...(runId === undefined ? {} : { runId }) });
  } catch (err) {
    options.logger.error({ err, code, runId }, 'dead-lettering failed; the message will be redelivered');
    await delivery.nak(retryMs).catch(() => undefined);
  }
}
