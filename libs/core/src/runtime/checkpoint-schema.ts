/**
 * Checkpoint schema versions. Every checkpoint records the version of its layout; a loader brings
 * an older one up to {@link CHECKPOINT_SCHEMA_VERSION} through the registered migrations, one
 * version at a time, and refuses a newer one (a newer Baton wrote it) without touching it.
 *
 * Invariants:
 * 1. A migration runs on a verified checkpoint (after openCheckpoint): a signature covers the
 *    stored form, so the check happens before anything rewrites it.
 * 2. Nothing is written back on load: the migrated form reaches the store only with the run's next
 *    checkpoint, under the current version, so a failed or refused load leaves the data as it was.
 * 3. With the current version, the checkpoint is returned as it is (no copy).
 */
import type { Checkpoint } from '../adapter/contracts/checkpoints.js';
import { CheckpointSchemaError } from './errors.js';
import { isPromiseEntry, type JournalEntry } from '../shared/journal.js';

/**
 * The newest layout version this Baton reads and writes. Raise it together with a migration from
 * the old one. Version 2: entries may hold payload references (docs/large-payloads.md) instead of
 * values; a worker that knows only version 1 would replay them as missing values, so it must
 * refuse (and hold) such a checkpoint. Version 3: entries may hold updates (UpdateAccepted,
 * UpdateCompleted: docs/updates.md), durable promises (docs/promises.md) or search attributes
 * (AttributesSet: docs/search-attributes.md); a worker that knows only version 2 would replay the
 * run without its update handlers' steps, its promises' values or its attribute steps.
 * See {@link checkpointSchemaFor}.
 */
export const CHECKPOINT_SCHEMA_VERSION = 3;

/**
 * The version a checkpoint holding `entries` is written with: the oldest that reads it correctly,
 * so that an older worker still resumes every run that has no payload reference and no update
 * during a rolling deploy, and leaves (never misreads) one that has.
 */
export function checkpointSchemaFor(entries: readonly JournalEntry[]): number {
  let version = 1;
  for (const entry of entries) {
    if (
      entry.type === 'UpdateAccepted' ||
      entry.type === 'UpdateCompleted' ||
      entry.type === 'AttributesSet' ||
      isPromiseEntry(entry)
    )
      return 3;
    const fields = entry as { resultRef?: unknown; payloadRef?: unknown; valueRef?: unknown };
    if (fields.resultRef !== undefined || fields.payloadRef !== undefined || fields.valueRef !== undefined)
      version = 2;
  }
  return version;
}

/** Brings a checkpoint of version `n` to version `n + 1` (the loader sets `schemaVersion`). */
export type CheckpointMigration = (checkpoint: Checkpoint) => Checkpoint;

/** Migrations by the version they migrate from. */
export type CheckpointMigrations = Readonly<Record<number, CheckpointMigration>>;

/**
 * The registered migrations: `{ [fromVersion]: (checkpoint) => checkpoint }`; a change of layout
 * adds its entry here next to the raised constant. 1 -> 2 and 2 -> 3 change nothing: each version
 * only adds what the one before cannot hold.
 */
export const checkpointMigrations: CheckpointMigrations = Object.freeze({
  1: (checkpoint: Checkpoint) => checkpoint,
  2: (checkpoint: Checkpoint) => checkpoint,
});

/**
 * Returns `checkpoint` at version `current`, applying `migrations` in order. Throws
 * CheckpointSchemaError, naming the run, the checkpoint and the version, for a version newer than
 * `current` or one with no migration path; the caller leaves the run for a worker that can read it.
 */
export function migrateCheckpoint<T extends Checkpoint>(
  checkpoint: T,
  runId: string,
  migrations: CheckpointMigrations = checkpointMigrations,
  current: number = CHECKPOINT_SCHEMA_VERSION,
): T {
  const version = checkpoint.schemaVersion;
  if (version === current) return checkpoint;
  const refuse = (detail: string): CheckpointSchemaError =>
    new CheckpointSchemaError(runId, checkpoint.seq, version, current, detail);
  if (!Number.isSafeInteger(version) || version < 1) {
    throw refuse('the version is not a positive whole number; the checkpoint is damaged');
  }
  if (version > current) {
    throw refuse(
      'a newer Baton wrote it. The run is left as it is, for a worker of that version: upgrade this worker',
    );
  }
  let migrated: Checkpoint = checkpoint;
  for (let from = version; from < current; from++) {
    const migration = migrations[from];
    if (migration === undefined) {
      throw refuse(`no migration from version ${from} is registered; deploy a Baton that has one`);
    }
    migrated = { ...migration(migrated), schemaVersion: from + 1 };
  }
  return migrated as T;
}
