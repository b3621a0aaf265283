/**
 * Protects a checkpoint before a store writes it, and checks it after a store loads it. The
 * summary fields (run, seq, epoch, journal position, status, schema, time) stay readable, so
 * stores keep fencing and listing as today; the entries, the only part holding workflow data,
 * are sealed by the payload codec; then the whole record is signed.
 *
 *   write: protectCheckpoint(checkpoint, protection) -> store.checkpoints.write(...)
 *   load:  opened = openCheckpoint(await store.checkpoints.load(runId), runId, protection)
 *          head = verifyJournalTail(filterFencedEntries(tail, opened.epoch), runId, opened, protection)
 *
 * Order on load: run id, signature (over the sealed form, so nothing is decrypted before the
 * record is known to be ours), unseal, then the chain over the entries against `chainHead`.
 */
import { encodeJson } from '../codec.js';
import type { Checkpoint } from '../../adapter/contracts/checkpoints.js';
import { CheckpointIntegrityError } from '../../adapter/errors.js';
import type { JournalEntry, PositionedEntry } from '../../shared/journal.js';
import {
  checkpointLabel,
  signCheckpoint,
  verifyCheckpoint,
  type ProtectedCheckpoint,
} from './checkpoint-signing.js';
import { chainGenesis, chainHeadOf, verifyChain, type ChainedEntry } from './hash-chain.js';
import { PAYLOAD_ENV } from './keyring.js';
import type { PayloadProtection } from './payload-config.js';

/**
 * A loaded, verified checkpoint with its entries in the clear and the chain head after them (the
 * `startHash` of the journal that follows). The head is undefined only when the chain is off and
 * the checkpoint recorded none, so the zero-configuration path hashes nothing.
 */
export type OpenedCheckpoint = Checkpoint & { chainHead?: string };

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The form of `checkpoint` to store: `chainHead` added when the chain is on (computed from the
 * entries unless the caller tracked it already), entries sealed when the codec compresses or
 * encrypts them, and a signature when signing keys are set.
 */
export function protectCheckpoint(
  checkpoint: Checkpoint & { chainHead?: string },
  protection: PayloadProtection,
): ProtectedCheckpoint {
  let out: ProtectedCheckpoint = checkpoint;
  if (protection.hashChain && checkpoint.chainHead === undefined) {
    out = { ...out, chainHead: chainHeadOf(checkpoint.entries, chainGenesis(checkpoint.runId)) };
  }
  const { codec } = protection;
  if (!codec.identity) {
    const plain = encodeJson(checkpoint.entries);
    const sealed = codec.encode(plain, { runId: checkpoint.runId, what: checkpointLabel(checkpoint) });
    // The codec returns its input when compression would not pay and nothing is encrypted.
    if (sealed !== plain)
      out = { ...out, entries: [], sealedEntries: Buffer.from(sealed).toString('base64') };
  }
  return protection.signing === undefined ? out : signCheckpoint(out, protection.signing);
}

/**
 * Verifies and unseals a checkpoint loaded for run `runId`. Throws CheckpointIntegrityError,
 * naming the run and the checkpoint, when it belongs to another run, its signature is missing or
 * wrong, its sealed entries do not decode, or its entries do not hash to its `chainHead`.
 */
export function openCheckpoint(
  stored: ProtectedCheckpoint,
  runId: string,
  protection: PayloadProtection,
): OpenedCheckpoint {
  const label = checkpointLabel(stored);
  const fail = (detail: string, cause?: unknown): CheckpointIntegrityError =>
    new CheckpointIntegrityError(
      runId,
      label,
      `${detail}. Do not resume from it: restore it, or let the run fail`,
      {
        cause,
      },
    );
  if (stored.runId !== runId) {
    throw fail(`it belongs to run ${String(stored.runId)}; a store returned another run's checkpoint`);
  }
  if (protection.signing !== undefined) {
    verifyCheckpoint(stored, protection.signing, { requireSignature: protection.requireSignature });
  }
  const { signature: _signature, sealedEntries, chainHead, ...checkpoint } = stored;
  let entries: JournalEntry[] = checkpoint.entries;
  if (sealedEntries !== undefined) {
    if (typeof sealedEntries !== 'string' || (Array.isArray(entries) && entries.length > 0)) {
      throw fail('it holds both sealed and plain entries, or malformed sealed entries');
    }
    const plain = protection.codec.decode(Buffer.from(sealedEntries, 'base64'), { runId, what: label });
    entries = parseEntries(plain, fail);
  } else if (protection.encryption !== undefined && !protection.allowPlaintext) {
    throw fail(
      `its entries are not encrypted but encryption is configured; if it was written before encryption was turned on, ` +
        `set ${PAYLOAD_ENV.allowPlaintext}=true until the run has checkpointed again`,
    );
  }
  if (!Array.isArray(entries)) throw fail('its entries field is not a list');
  if (chainHead === undefined && protection.requireLinks) {
    throw fail(
      `it records no chain head but the hash chain is on; if it was written before encryption or signing was ` +
        `turned on, set ${PAYLOAD_ENV.allowPlaintext}=true until the run has checkpointed again`,
    );
  }
  if (chainHead === undefined && !protection.hashChain) return { ...checkpoint, entries };
  const head = verifyChain(entries, { runId, allowUnlinked: !protection.requireLinks, where: label });
  if (chainHead !== undefined && chainHead !== head) {
    throw fail(
      `its ${entries.length} entries hash to ${head.slice(0, 12)}… but it records chain head ${String(chainHead).slice(0, 12)}…: ` +
        'entries were removed from its end, or the head was changed',
    );
  }
  return { ...checkpoint, entries, chainHead: head };
}

function parseEntries(
  plain: Uint8Array,
  fail: (detail: string, cause?: unknown) => CheckpointIntegrityError,
): JournalEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(plain));
  } catch (cause) {
    throw fail('its sealed entries decode to bytes that are not JSON', cause);
  }
  if (!Array.isArray(parsed)) throw fail('its sealed entries are not a list');
  return parsed as JournalEntry[];
}

/**
 * Verifies the effective journal entries read after `checkpoint` (or the whole journal when there
 * is none) and returns the chain head a writer continues from. Returns undefined, checking
 * nothing, when the chain is off. Pass the entries after filterFencedEntries: a fenced zombie's
 * writes are not part of the chain.
 */
export function verifyJournalTail(
  tail: readonly (ChainedEntry | PositionedEntry)[],
  runId: string,
  checkpoint: OpenedCheckpoint | undefined,
  protection: PayloadProtection,
): string | undefined {
  if (!protection.hashChain) return undefined;
  return verifyChain(tail, {
    runId,
    // With the chain on, openCheckpoint always returns a head; the fallback covers a caller that
    // built the checkpoint some other way.
    // Undefined without a checkpoint: verifyChain starts from the genesis and says "removed".
    startHash:
      checkpoint === undefined
        ? undefined
        : (checkpoint.chainHead ?? chainHeadOf(checkpoint.entries, chainGenesis(runId))),
    startIndex: checkpoint?.entries.length ?? 0,
    allowUnlinked: !protection.requireLinks,
    where: checkpoint === undefined ? undefined : `journal after ${checkpointLabel(checkpoint)}`,
  });
}
