/**
 * Payload protection for journal records and checkpoints: compression, AES-256-GCM encryption
 * with rotating key ids, HMAC-SHA256 checkpoint signatures and a hash chain over each run's
 * entries. Pure: node:crypto and node:zlib only. See docs/integrity.md.
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
export { canonicalJson } from './canonical-json.js';
export type { KeyPurpose, ParseKeyringOptions } from './keyring.js';
export {
  ENCRYPTION_KEY_BYTES,
  KEY_ID_PATTERN,
  Keyring,
  keyringFromEnv,
  MIN_SIGNING_KEY_BYTES,
  parseKeyring,
  PAYLOAD_ENV,
  SecretKey,
} from './keyring.js';
export type { PayloadCodec, PayloadCodecOptions, PayloadContext } from './payload-codec.js';
export {
  createPayloadCodec,
  DEFAULT_COMPRESS_THRESHOLD_BYTES,
  DEFAULT_MAX_DECODED_BYTES,
  FRAME_FLAG_COMPRESSED,
  FRAME_FLAG_ENCRYPTED,
  FRAME_MAGIC,
  FRAME_VERSION,
  IDENTITY_PAYLOAD_CODEC,
  isPayloadFrame,
} from './payload-codec.js';
export type { PayloadProtection, PayloadProtectionOptions } from './payload-config.js';
export {
  describePayloadProtection,
  payloadKeyFingerprints,
  protectionActive,
  resolvePayloadProtection,
} from './payload-config.js';
export type { StoredCheckpoint } from './stored-checkpoint.js';
export { openStoredCheckpoint } from './stored-checkpoint.js';
export {
  decodeJournalRecord,
  encodeJournalRecord,
  JOURNAL_RECORD,
  journalRecordContext,
} from './journal-records.js';
export type { ChainedEntry, VerifyChainOptions } from './hash-chain.js';
export { chainGenesis, chainHeadOf, chainLink, linkEntries, verifyChain } from './hash-chain.js';
export type {
  CheckpointSignature,
  ProtectedCheckpoint,
  VerifyCheckpointOptions,
} from './checkpoint-signing.js';
export { checkpointLabel, signCheckpoint, verifyCheckpoint } from './checkpoint-signing.js';
export type { OpenedCheckpoint } from './checkpoint-protection.js';
export { openCheckpoint, protectCheckpoint, verifyJournalTail } from './checkpoint-protection.js';
export type { SealedError, SealedPurpose, SealedValue } from './sealed-values.js';
export {
  isSealedError,
  isSealedValue,
  openError,
  openResult,
  openValue,
  protectedLabel,
  scheduleSealId,
  SEALED_VALUE_FIELD,
  sealError,
  sealOutcome,
  sealsValues,
  sealValue,
} from './sealed-values.js';
export type { ClaimCheckOptions, LargePayloadOptions } from './claim-check.js';
export {
  ClaimCheck,
  resolveClaimCheck,
  DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES,
  holdsPayloadRefs,
  LARGE_PAYLOAD,
} from './claim-check.js';
