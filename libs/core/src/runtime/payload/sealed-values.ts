/**
 * Sealed values: a run's input, result and error, and signal payloads, protected by the payload
 * codec wherever Baton keeps or sends them (a run message, the store's run record, the signal
 * inbox), not only in the journal and checkpoints. See docs/integrity.md, "Values outside the
 * journal".
 *
 * A sealed value is a JSON object, `{ "$baton.sealed": 1, "key": "k1", "frame": "<base64>" }`,
 * in the place of the value, so every store keeps it in the column or field it already has.
 *
 * Invariants:
 * 1. Only encryption seals. Without an encryption key a value is kept as it is (compression alone
 *    does not pay for the base64 and the shape change); `null` and `undefined` carry nothing and
 *    are never sealed.
 * 2. A frame is bound to its run and its purpose (`run input`, `run result`, `run error`,
 *    `signal payload`, `update args`, `update result`, `update error`; a schedule's input to
 *    `schedule:<id>` and `schedule input`): moved to another run or field, it fails authentication.
 * 3. Reading never guesses: a sealed value opens with the key it names (MissingKeyError naming it
 *    when this process lacks it) or fails verification; a plain value is returned as it is, and
 *    the caller decides whether plaintext is acceptable there (a run record written before
 *    sealing existed is; a run message to a fleet that requires encryption is not).
 * 4. A continue-as-new result's successor (its id, workflow and version; its input is sealed for
 *    the successor) and an error's name, code and retryable flag stay in the clear: the worker, the
 *    client and operators read them as summary fields.
 */
import { encodeJson } from '../codec.js';
import { CONTINUED_AS, isContinuedAsNew } from '../../author/continue-as-new.js';
import type { RunOutcome } from '../../adapter/contracts/run-index.js';
import type { UpdateOutcome } from '../../adapter/contracts/updates.js';
import { type SerializedError } from '../../shared/errors.js';
import { CheckpointIntegrityError } from '../../adapter/errors.js';
import { IDENTITY_PAYLOAD_CODEC, type PayloadContext } from './payload-codec.js';
import type { PayloadProtection } from './payload-config.js';
import { isSealedValue, SEALED_VALUE_FIELD, type SealedValue } from './sealed-shape.js';

export { isSealedValue, SEALED_VALUE_FIELD, type SealedValue } from './sealed-shape.js';

/** The purposes a value is sealed for (bound into its frame). */
export type SealedPurpose =
  | 'run input'
  | 'run result'
  | 'run error'
  | 'signal payload'
  | 'schedule input'
  | 'update args'
  | 'update result'
  | 'update error'
  | 'query args'
  | 'query result';

/**
 * What a schedule's input is bound to in place of a run id (a schedule is not a run): sealed for
 * `schedule:<id>`, it cannot pass for a run's input, nor for another schedule's.
 */
export function scheduleSealId(scheduleId: string): string {
  return `schedule:${scheduleId}`;
}

/** A run error whose details are sealed: name, code and retryable stay readable. */
export interface SealedError extends SerializedError {
  readonly sealed: SealedValue;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** True for an error whose details are sealed. */
export function isSealedError(error: SerializedError | undefined): error is SealedError {
  return error !== undefined && isSealedValue((error as { sealed?: unknown }).sealed);
}

/** What a reader without the key is shown instead of the value: `protected (key k1)`. */
export function protectedLabel(value: SealedValue): string {
  return `protected (key ${value.key})`;
}

/** True when values are sealed under `protection` (an encryption key is configured). */
export function sealsValues(protection: PayloadProtection | undefined): boolean {
  return protection?.encryption !== undefined;
}

function contextOf(runId: string, purpose: SealedPurpose, label?: string): PayloadContext {
  return {
    runId,
    what: purpose,
    label: label ?? `${purpose} of ${runId.startsWith('schedule:') ? '' : 'run '}${runId}`,
  };
}

/**
 * `value` sealed for `runId` and `purpose` when `protection` encrypts (invariant 1); otherwise
 * `value` itself. A value already sealed is returned as it is. A value with no JSON form raises
 * UnencodableValueError naming `what`.
 */
export function sealValue(
  value: unknown,
  runId: string,
  purpose: SealedPurpose,
  protection: PayloadProtection | undefined,
  what: string = `${purpose} of run ${runId}`,
): unknown {
  if (!sealsValues(protection) || value === undefined || value === null || isSealedValue(value)) return value;
  const frame = protection!.codec.encode(encodeJson(value, what), contextOf(runId, purpose));
  const sealed: SealedValue = {
    [SEALED_VALUE_FIELD]: 1,
    key: protection!.encryption!.active.id,
    frame: Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('base64'),
  };
  return sealed;
}

/**
 * The value `stored` stands for: opened when sealed (invariant 3), else `stored` itself.
 * Throws MissingKeyError naming the key when `protection` lacks it, CheckpointIntegrityError
 * when the frame does not verify for `runId` and `purpose`.
 */
export function openValue(
  stored: unknown,
  runId: string,
  purpose: SealedPurpose,
  protection: PayloadProtection | undefined,
  label?: string,
): unknown {
  if (!isSealedValue(stored)) return stored;
  const ctx = contextOf(runId, purpose, label);
  const bytes = Buffer.from(stored.frame, 'base64');
  // Without any protection, the identity codec still names the key the frame needs (MissingKeyError).
  const plain = (protection?.codec ?? IDENTITY_PAYLOAD_CODEC).decode(bytes, ctx);
  try {
    return JSON.parse(decoder.decode(plain)) as unknown;
  } catch (cause) {
    throw new CheckpointIntegrityError(runId, ctx.label!, 'its sealed value is not UTF-8 JSON', { cause });
  }
}

/**
 * `error` with its message, stack and cause sealed (invariant 4); `error` itself when nothing seals.
 * `purpose` is `run error` but for an update's (`update error`).
 */
export function sealError(
  error: SerializedError | undefined,
  runId: string,
  protection: PayloadProtection | undefined,
  purpose: 'run error' | 'update error' = 'run error',
): SerializedError | undefined {
  if (error === undefined || !sealsValues(protection) || isSealedError(error)) return error;
  const sealed = sealValue(error, runId, purpose, protection) as SealedValue;
  return {
    name: error.name,
    message: protectedLabel(sealed),
    ...(error.code !== undefined && { code: error.code }),
    ...(error.retryable !== undefined && { retryable: error.retryable }),
    sealed,
  } as SealedError;
}

/** The error `stored` stands for: opened when sealed, else `stored` itself (throws as openValue). */
export function openError(
  stored: SerializedError | undefined,
  runId: string,
  protection: PayloadProtection | undefined,
  purpose: 'run error' | 'update error' = 'run error',
): SerializedError | undefined {
  if (!isSealedError(stored)) return stored;
  return openValue(stored.sealed, runId, purpose, protection) as SerializedError;
}

/**
 * The outcome as the store keeps it: a result sealed as `run result`, an error as sealError. A
 * continue-as-new result keeps its successor's id, workflow and version in the clear (invariant
 * 4) with the successor's input sealed for that run.
 */
export function sealOutcome(
  outcome: RunOutcome,
  runId: string,
  protection: PayloadProtection | undefined,
): RunOutcome {
  if (!sealsValues(protection)) return outcome;
  if (outcome.status !== 'completed')
    return { ...outcome, error: sealError(outcome.error, runId, protection)! };
  if (!isContinuedAsNew(outcome.result)) {
    return { status: 'completed', result: sealValue(outcome.result, runId, 'run result', protection) };
  }
  const next = outcome.result[CONTINUED_AS];
  return {
    status: 'completed',
    result: {
      [CONTINUED_AS]: { ...next, input: sealValue(next.input, next.runId, 'run input', protection) },
    },
  };
}

/** A stored result opened (a continue-as-new result's input too); throws as openValue. */
export function openResult(
  stored: unknown,
  runId: string,
  protection: PayloadProtection | undefined,
): unknown {
  if (!isContinuedAsNew(stored)) return openValue(stored, runId, 'run result', protection);
  const next = stored[CONTINUED_AS];
  if (!isSealedValue(next.input)) return stored;
  return { [CONTINUED_AS]: { ...next, input: openValue(next.input, next.runId, 'run input', protection) } };
}

/**
 * An update's outcome as the store keeps it (`updates.settle`): a result sealed as `update result`,
 * an error as sealError for `update error`; itself when nothing seals.
 */
export function sealUpdateOutcome(
  outcome: UpdateOutcome,
  runId: string,
  protection: PayloadProtection | undefined,
): UpdateOutcome {
  if (!sealsValues(protection)) return outcome;
  if (outcome.status === 'completed') {
    return { status: 'completed', result: sealValue(outcome.result, runId, 'update result', protection) };
  }
  return { status: outcome.status, error: sealError(outcome.error, runId, protection, 'update error')! };
}

/** A kept update's outcome opened (the reverse of sealUpdateOutcome); throws as openValue. */
export function openUpdateOutcome(
  stored: UpdateOutcome,
  runId: string,
  protection: PayloadProtection | undefined,
): UpdateOutcome {
  if (stored.status === 'completed') {
    return { status: 'completed', result: openValue(stored.result, runId, 'update result', protection) };
  }
  return { status: stored.status, error: openError(stored.error, runId, protection, 'update error')! };
}
