/**
 * Payload protection for journal records and checkpoints: compression, AES-256-GCM encryption
 * with rotating key ids, HMAC-SHA256 checkpoint signatures and a hash chain over each run's
 * entries. Pure: node:crypto and node:zlib only. See docs/integrity.md. What the worker, the
 * client and the test kit call is exported; what works behind those calls (the keyring, the frame
 * layout, checkpoint signatures, the chain's links, claim-check internals) is not.
 *
 * @example
 * ```ts
 * import { resolvePayloadProtection, encodeJournalRecord, decodeJournalRecord } from '@baton/core/runtime';
 *
 * const protection = resolvePayloadProtection({}, process.env); // throws ConfigError on a bad key
 * log.info(describePayloadProtection(protection)); // key ids only
 * const data = encodeJournalRecord(entries, runId, protection.codec);
 * const back = decodeJournalRecord(data, runId, protection.codec, position);
 * const stored = protectCheckpoint(checkpoint, protection);
 * const opened = openCheckpoint(stored, runId, protection); // CheckpointIntegrityError if tampered
 * ```
 */
export { PAYLOAD_ENV } from './keyring.js';
export type { PayloadCodec } from './payload-codec.js';
export { FRAME_MAGIC, IDENTITY_PAYLOAD_CODEC } from './payload-codec.js';
export type { PayloadProtection, PayloadProtectionOptions } from './payload-config.js';
export {
  describePayloadProtection,
  payloadKeyFingerprints,
  protectionActive,
  resolvePayloadProtection,
} from './payload-config.js';
export { decodeJournalRecord, encodeJournalRecord, journalRecordContext } from './journal-records.js';
export { chainGenesis, linkEntries } from './hash-chain.js';
export type { ProtectedCheckpoint } from './checkpoint-signing.js';
export { openCheckpoint, protectCheckpoint } from './checkpoint-protection.js';
export {
  isSealedValue,
  openError,
  openResult,
  openUpdateOutcome,
  openValue,
  protectedLabel,
  scheduleSealId,
  sealOutcome,
  sealUpdateOutcome,
  sealsValues,
  sealValue,
} from './sealed-values.js';
export type { LargePayloadOptions } from './claim-check.js';
export { ClaimCheck, resolveClaimCheck } from './claim-check.js';
