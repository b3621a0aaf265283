/**
 * Checkpoint signatures: an HMAC-SHA256, under the active signing key, over the canonical JSON of
 * the checkpoint without its `signature` field. Every other field is covered, including ones a
 * later version adds, so no field can change unnoticed.
 *
 *   mac = HMAC-SHA256(key, "baton-checkpoint-v1\n" keyId "\n" canonicalJson(checkpoint - signature))
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Checkpoint } from '../../adapter/contracts/checkpoints.js';
import { CheckpointIntegrityError } from '../../adapter/errors.js';
import { MissingKeyError } from '../errors.js';
import { canonicalJson } from './canonical-json.js';
import { KEY_ID_PATTERN, keyObjectOf, PAYLOAD_ENV, type Keyring, type SecretKey } from './keyring.js';

const DOMAIN = 'baton-checkpoint-v1\n';

/** Which key signed a checkpoint, and the MAC (base64url). */
export interface CheckpointSignature {
  keyId: string;
  mac: string;
}

/** A checkpoint as stored when protection is on; every added field is optional so old ones still type. */
export type ProtectedCheckpoint = Checkpoint & {
  /** The hash chain head after the checkpoint's last entry (see hash-chain.ts). */
  chainHead?: string;
  /** The entries, encoded by the payload codec (base64) when it compresses or encrypts; `entries` is then empty. */
  sealedEntries?: string;
  signature?: CheckpointSignature;
};

/** How errors name a checkpoint; also the purpose its sealed entries are bound to. */
export function checkpointLabel(checkpoint: Pick<Checkpoint, 'seq'>): string {
  return `checkpoint ${String(checkpoint.seq)}`;
}

/** A copy of `checkpoint` signed with the keyring's active key (any earlier signature is replaced). */
export function signCheckpoint<T extends ProtectedCheckpoint>(
  checkpoint: T,
  keyring: Keyring,
): T & { signature: CheckpointSignature } {
  const { signature: _old, ...content } = checkpoint;
  const key = keyring.active;
  return { ...checkpoint, signature: { keyId: key.id, mac: mac(key, content).toString('base64url') } };
}

/** Options of {@link verifyCheckpoint}. */
export interface VerifyCheckpointOptions {
  /**
   * Refuse a checkpoint without a signature (off only while checkpoints written before signing remain).
   * @defaultValue true
   */
  requireSignature?: boolean;
}

/**
 * Checks the signature of a loaded checkpoint. Throws CheckpointIntegrityError naming the run and
 * the checkpoint when it is missing (and required), malformed, made with a key not in the ring,
 * or does not match the content.
 */
export function verifyCheckpoint(
  checkpoint: ProtectedCheckpoint,
  keyring: Keyring,
  options: VerifyCheckpointOptions = {},
): void {
  const fail = (detail: string): CheckpointIntegrityError =>
    new CheckpointIntegrityError(
      String(checkpoint.runId),
      checkpointLabel(checkpoint),
      `${detail}. Do not resume from it: restore it, or let the run fail`,
    );
  const { signature, ...content } = checkpoint;
  if (signature === undefined) {
    if (options.requireSignature === false) return;
    throw fail(
      `it carries no signature but ${keyring.source} is configured; if it was written before signing was turned on, ` +
        `set ${PAYLOAD_ENV.allowPlaintext}=true until the run has checkpointed again`,
    );
  }
  if (
    typeof signature !== 'object' ||
    signature === null ||
    typeof signature.keyId !== 'string' ||
    typeof signature.mac !== 'string'
  ) {
    throw fail('its signature field is malformed');
  }
  const key = keyring.get(signature.keyId);
  if (key === undefined) {
    const keyId = safeId(signature.keyId);
    throw new MissingKeyError(
      String(checkpoint.runId),
      checkpointLabel(checkpoint),
      keyId,
      'signing',
      `it is signed with key ${keyId}, which is not in ${keyring.source} (it holds ${keyring.ids.join(', ')}); ` +
        'add that key back: keep every signing key as long as checkpoints signed with it exist',
    );
  }
  const expected = mac(key, content);
  const found = Buffer.from(signature.mac, 'base64url');
  if (found.length !== expected.length || !timingSafeEqual(found, expected)) {
    throw fail(
      `its HMAC-SHA256 signature (key ${key.id}) does not match its content: a field was changed after it was ` +
        `signed, or key ${key.id} in ${keyring.source} is not the key that signed it`,
    );
  }
}

function mac(key: SecretKey, content: object): Buffer {
  return createHmac('sha256', keyObjectOf(key))
    .update(DOMAIN)
    .update(key.id)
    .update('\n')
    .update(canonicalJson(content))
    .digest();
}

/** An id read from stored data is shown only when it looks like an id (it is not ours to trust). */
function safeId(id: string): string {
  return KEY_ID_PATTERN.test(id) ? id : '(malformed id)';
}
