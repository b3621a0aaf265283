/**
 * A loaded checkpoint on its way to replay (the worker) or to a fork or retry (the client): schema version checked, signature and chain verified,
 * entries unsealed, then migrated to the current schema version.
 *
 * Order, and why:
 * 1. A schema version newer than this worker knows is refused before anything else: a newer layout
 *    may seal or sign differently, and the data must stay untouched for a newer worker.
 * 2. openCheckpoint verifies the stored form (signature first, so nothing is decrypted before the
 *    record is known to be authentic), unseals and checks the chain.
 * 3. Migrations run on the verified, unsealed checkpoint.
 *
 * Without protection and with the current version, the stored checkpoint is used as it is, unless
 * it holds sealed entries: then openCheckpoint runs anyway and names the key it would need, rather
 * than letting a replay start from the empty `entries` a sealed checkpoint carries.
 */
import { CHECKPOINT_SCHEMA_VERSION, migrateCheckpoint } from '../checkpoint-schema.js';
import type { Checkpoint } from '../../adapter/contracts/checkpoints.js';
import { openCheckpoint, type OpenedCheckpoint } from './checkpoint-protection.js';
import type { ProtectedCheckpoint } from './checkpoint-signing.js';
import { protectionActive, type PayloadProtection } from './payload-config.js';

export interface StoredCheckpoint {
  /** The checkpoint to replay from, at the current schema version. */
  checkpoint: Checkpoint;
  /** The verified checkpoint before migration: its chain head is where the journal after it continues. */
  verified: OpenedCheckpoint;
  /** A migration changed the entries (they may no longer hash to `verified.chainHead`). */
  migrated: boolean;
}

/** Checks, opens and migrates `stored`; throws CheckpointSchemaError or CheckpointIntegrityError. */
export function openStoredCheckpoint(
  stored: ProtectedCheckpoint,
  runId: string,
  protection: PayloadProtection,
  /** A check of the caller's own, run once the version is known to be readable and before opening. */
  beforeOpen?: (stored: ProtectedCheckpoint) => void,
): StoredCheckpoint {
  const current = stored.schemaVersion === CHECKPOINT_SCHEMA_VERSION;
  // Throws for a newer (or malformed) version; an older one is migrated after verification.
  if (!current && !(stored.schemaVersion < CHECKPOINT_SCHEMA_VERSION)) migrateCheckpoint(stored, runId);
  beforeOpen?.(stored);
  const verified =
    protectionActive(protection) || stored.sealedEntries !== undefined
      ? openCheckpoint(stored, runId, protection)
      : stored;
  if (current) return { checkpoint: verified, verified, migrated: false };
  const checkpoint = migrateCheckpoint(verified, runId);
  // A migration that leaves the entries as they are (1 -> 2) keeps the chain as it is.
  return { checkpoint, verified, migrated: checkpoint.entries !== verified.entries };
}
