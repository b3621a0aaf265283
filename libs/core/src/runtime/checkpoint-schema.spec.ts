import { describe, expect, it } from 'vitest';
import type { Checkpoint } from '../adapter/contracts/checkpoints.js';
import { CHECKPOINT_SCHEMA_VERSION, checkpointSchemaFor, migrateCheckpoint } from './checkpoint-schema.js';
import type { JournalEntry } from '../shared/journal.js';
import { CheckpointSchemaError } from './errors.js';

const base: Checkpoint = {
  runId: 'run-1',
  seq: 3,
  epoch: 2,
  journalPosition: 17,
  entries: [],
  status: 'running',
  schemaVersion: 1,
  createdAt: 1_700_000_000_000,
};

describe('migrateCheckpoint', () => {
  it('returns a checkpoint of the current version as it is', () => {
    const checkpoint = { ...base, schemaVersion: CHECKPOINT_SCHEMA_VERSION };
    expect(migrateCheckpoint(checkpoint, 'run-1')).toBe(checkpoint);
  });

  it('applies the registered migrations in order up to the current version', () => {
    const calls: number[] = [];
    const migrated = migrateCheckpoint(
      { ...base, schemaVersion: 1 },
      'run-1',
      {
        1: (cp) => (calls.push(cp.schemaVersion), { ...cp, journalPosition: cp.journalPosition + 1 }),
        2: (cp) => (calls.push(cp.schemaVersion), { ...cp, status: 'suspended' }),
      },
      3,
    );
    expect(calls).toEqual([1, 2]);
    expect(migrated).toMatchObject({ schemaVersion: 3, journalPosition: 18, status: 'suspended' });
  });

  it('refuses a version newer than it knows, naming the run, the checkpoint and the version', () => {
    const error = (() => {
      try {
        migrateCheckpoint({ ...base, schemaVersion: CHECKPOINT_SCHEMA_VERSION + 1 }, 'run-1');
      } catch (err) {
        return err;
      }
    })();
    expect(error).toBeInstanceOf(CheckpointSchemaError);
    expect(error).toMatchObject({
      code: 'BATON_CHECKPOINT_SCHEMA',
      runId: 'run-1',
      checkpointSeq: 3,
      schemaVersion: CHECKPOINT_SCHEMA_VERSION + 1,
      retryable: false,
    });
    expect((error as Error).message).toMatch(
      new RegExp(
        `run run-1: checkpoint 3 has schema version ${CHECKPOINT_SCHEMA_VERSION + 1}.*upgrade this worker`,
      ),
    );
  });

  it('refuses an old version without a migration path, and a malformed version', () => {
    expect(() => migrateCheckpoint({ ...base, schemaVersion: 1 }, 'run-1', {}, 2)).toThrow(
      /no migration from version 1 is registered/,
    );
    expect(() => migrateCheckpoint({ ...base, schemaVersion: 'x' as unknown as number }, 'run-1')).toThrow(
      CheckpointSchemaError,
    );
  });

  it('version 2 is written only for entries holding payload references; 1 migrates to 2 unchanged', () => {
    const done: JournalEntry = {
      type: 'ActivityCompleted',
      epoch: 1,
      at: 1,
      seq: 0,
      name: 'a',
      result: 1,
      attempts: 1,
    };
    const byRef = { ...done, resultRef: { sha256: 'b'.repeat(64), size: 1, run: 'run-1' } } as JournalEntry;
    expect(checkpointSchemaFor([done])).toBe(1);
    expect(checkpointSchemaFor([done, byRef])).toBe(2);
    // Updates (docs/updates.md): a worker that knows only version 2 must leave such a run alone.
    const accepted: JournalEntry = {
      type: 'UpdateAccepted',
      epoch: 1,
      at: 1,
      updateId: 'u',
      name: 'x',
      args: null,
    };
    expect(checkpointSchemaFor([done, accepted])).toBe(3);
    expect(checkpointSchemaFor([accepted, byRef])).toBe(3);
    // An AttributesSet step (docs/search-attributes.md) needs version 3, whatever else is there.
    const set: JournalEntry = { type: 'AttributesSet', epoch: 1, at: 1, seq: 1, attributes: {} };
    expect(checkpointSchemaFor([done, byRef, set])).toBe(3);
    const old = { ...base, entries: [done] };
    const migrated = migrateCheckpoint(old, 'run-1');
    expect(migrated).toEqual({ ...old, schemaVersion: CHECKPOINT_SCHEMA_VERSION });
    expect(migrated.entries).toBe(old.entries);
    const made = { type: 'PromiseCreated', epoch: 1, at: 1, seq: 1, token: 'bp_x', timeoutAt: null } as const;
    expect(checkpointSchemaFor([done, byRef, made])).toBe(3);
    expect(checkpointSchemaFor([{ ...made, type: 'PromiseTimedOut' } as JournalEntry])).toBe(3);
    // A worker that knows only version 1 leaves a version-2 checkpoint alone.
    expect(() => migrateCheckpoint({ ...old, schemaVersion: 2 }, 'run-1', {}, 1)).toThrow(
      CheckpointSchemaError,
    );
  });
});
