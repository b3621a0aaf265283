import { describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../adapter/contracts/checkpoints.js';
import { CheckpointIntegrityError } from '../../adapter/errors.js';
import type { JournalEntry } from '../../shared/journal.js';
import { filterFencedEntries } from '../../shared/journal.js';
import { openCheckpoint, protectCheckpoint, verifyJournalTail } from './checkpoint-protection.js';
import { decodeJournalRecord, encodeJournalRecord } from './journal-records.js';
import type { ProtectedCheckpoint } from './checkpoint-signing.js';
import { chainGenesis, chainHeadOf, linkEntries, verifyChain } from './hash-chain.js';
import { resolvePayloadProtection } from './payload-config.js';
import { testKeys } from './test-keys.spec-helper.js';

const runId = 'run-cp';
const enc = testKeys(['k1']);
const sig = testKeys(['s1']);

function checkpoint(seq = 2, extra: JournalEntry[] = []): Checkpoint {
  const entries = linkEntries(
    [
      {
        type: 'ActivityCompleted',
        epoch: 1,
        at: 1,
        seq: 0,
        name: 'lookup',
        result: { ssn: 'secret-123' },
        attempts: 1,
      },
      { type: 'TimerScheduled', epoch: 1, at: 2, seq: 1, wakeAt: 10 },
      ...extra,
    ],
    chainGenesis(runId),
  ).entries;
  return {
    runId,
    seq,
    epoch: 1,
    journalPosition: 7,
    entries,
    status: 'suspended',
    schemaVersion: 1,
    createdAt: 1_700_000_000_000,
  };
}

/** What a store hands back: the JSON it was given, parsed. */
const throughStore = (c: ProtectedCheckpoint): ProtectedCheckpoint =>
  JSON.parse(JSON.stringify(c)) as ProtectedCheckpoint;

function integrityError(fn: () => unknown): CheckpointIntegrityError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(CheckpointIntegrityError);
  return caught as CheckpointIntegrityError;
}

describe('checkpoint protection', () => {
  const full = resolvePayloadProtection({ encryptionKeys: enc.spec, signingKeys: sig.spec });

  it('passes a checkpoint through untouched when nothing is configured', () => {
    const none = resolvePayloadProtection();
    const original = checkpoint();
    expect(protectCheckpoint(original, none)).toBe(original);
    const opened = openCheckpoint(throughStore(original), runId, none);
    expect(opened).toEqual(original);
    expect(opened.chainHead).toBeUndefined();
  });

  it('seals the entries, records the chain head, signs, and opens back to the same checkpoint', () => {
    const original = checkpoint();
    const stored = throughStore(protectCheckpoint(original, full));
    expect(stored.entries).toEqual([]);
    expect(stored.sealedEntries).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(stored.signature?.keyId).toBe('s1');
    expect(JSON.stringify(stored)).not.toContain('secret-123');
    // The summary fields stay readable for the stores.
    expect([stored.seq, stored.epoch, stored.journalPosition, stored.status]).toEqual([2, 1, 7, 'suspended']);
    const opened = openCheckpoint(stored, runId, full);
    const head = verifyChain(original.entries, { runId });
    expect(stored.chainHead).toBe(head);
    expect(opened).toEqual({ ...original, chainHead: head });
  });

  it('keeps a chain head the writer tracked instead of recomputing it', () => {
    const original = { ...checkpoint(), chainHead: 'tracked' };
    expect(protectCheckpoint(original, full).chainHead).toBe('tracked');
  });

  it('refuses another run’s checkpoint', () => {
    const stored = throughStore(protectCheckpoint(checkpoint(), full));
    const err = integrityError(() => openCheckpoint(stored, 'run-other', full));
    expect(err.runId).toBe('run-other');
    expect(err.message).toMatch(/checkpoint 2 failed verification: it belongs to run run-cp/);
  });

  it('refuses sealed entries moved from another checkpoint of the run (encryption without signing)', () => {
    const encryptOnly = resolvePayloadProtection({ encryptionKeys: enc.spec });
    const older = throughStore(protectCheckpoint(checkpoint(2), encryptOnly));
    const newer = throughStore(protectCheckpoint(checkpoint(3), encryptOnly));
    const spliced = { ...newer, sealedEntries: older.sealedEntries };
    expect(integrityError(() => openCheckpoint(spliced, runId, encryptOnly)).message).toMatch(
      /^run run-cp: checkpoint 3 failed verification: AES-256-GCM authentication with key k1 failed/,
    );
  });

  it('detects entries cut from the end of a checkpoint through its chain head', () => {
    const lenient = resolvePayloadProtection({ encryptionKeys: enc.spec, allowPlaintext: true });
    const original = checkpoint(2, [{ type: 'TimerFired', epoch: 1, at: 3, seq: 1 }]);
    const cut = {
      ...original,
      chainHead: verifyChain(original.entries, { runId }),
      entries: original.entries.slice(0, 2),
    };
    expect(integrityError(() => openCheckpoint(cut, runId, lenient)).message).toMatch(
      /its 2 entries hash to .{12}… but it records chain head .{12}…: entries were removed from its end/,
    );
  });

  it('checks the entries’ own links, naming the checkpoint and the entry', () => {
    const signOnly = resolvePayloadProtection({ signingKeys: sig.spec });
    const original = checkpoint(2, [{ type: 'TimerFired', epoch: 1, at: 3, seq: 1 }]);
    const bad = { ...original, entries: [original.entries[0]!, original.entries[2]!] };
    // Signed after the damage (a buggy writer): the signature holds, the chain does not.
    const stored = throughStore(protectCheckpoint(bad, signOnly));
    expect(integrityError(() => openCheckpoint(stored, runId, signOnly)).entry).toBe(
      'checkpoint 2: journal entry #1 (TimerFired of step #1)',
    );
  });

  it('refuses unprotected checkpoints under protection unless plaintext is allowed', () => {
    const plain = throughStore(checkpoint());
    expect(integrityError(() => openCheckpoint(plain, runId, full)).message).toMatch(
      /it carries no signature/,
    );
    const encryptOnly = resolvePayloadProtection({ encryptionKeys: enc.spec });
    expect(integrityError(() => openCheckpoint(plain, runId, encryptOnly)).message).toMatch(
      /its entries are not encrypted but encryption is configured.*BATON_ALLOW_PLAINTEXT=true/,
    );
    const compressedOnly = throughStore(
      protectCheckpoint(checkpoint(), resolvePayloadProtection({ compressThresholdBytes: 0 })),
    );
    expect(compressedOnly.sealedEntries).toBeDefined();
    const signOnly = resolvePayloadProtection({ signingKeys: sig.spec });
    expect(integrityError(() => openCheckpoint(compressedOnly, runId, signOnly)).message).toMatch(
      /carries no signature/,
    );
    const migrating = resolvePayloadProtection({
      encryptionKeys: enc.spec,
      signingKeys: sig.spec,
      allowPlaintext: true,
    });
    expect(openCheckpoint(plain, runId, migrating).entries).toEqual(plain.entries);
  });

  it('refuses a checkpoint without a chain head when links are required', () => {
    const encryptOnly = resolvePayloadProtection({ encryptionKeys: enc.spec });
    const { chainHead: _dropped, ...withoutHead } = throughStore(
      protectCheckpoint(checkpoint(), encryptOnly),
    );
    expect(integrityError(() => openCheckpoint(withoutHead, runId, encryptOnly)).message).toMatch(
      /it records no chain head but the hash chain is on.*BATON_ALLOW_PLAINTEXT=true/,
    );
    const migrating = resolvePayloadProtection({ encryptionKeys: enc.spec, allowPlaintext: true });
    expect(openCheckpoint(withoutHead, runId, migrating).chainHead).toBe(
      verifyChain(checkpoint().entries, { runId }),
    );
  });

  it('refuses a checkpoint with both sealed and plain entries', () => {
    const lenient = resolvePayloadProtection({ encryptionKeys: enc.spec, allowPlaintext: true });
    const stored = throughStore(protectCheckpoint(checkpoint(), lenient));
    const both = { ...stored, entries: checkpoint().entries };
    expect(integrityError(() => openCheckpoint(both, runId, lenient)).message).toMatch(
      /both sealed and plain entries/,
    );
  });
});

describe('resume: checkpoint, then the journal after it', () => {
  const protection = resolvePayloadProtection({ encryptionKeys: enc.spec, signingKeys: sig.spec });

  /** Owner A journals and checkpoints; B takes over (blind marker); fenced A writes once more; B goes on. */
  function scenario(): {
    records: Array<{ position: number; data: Uint8Array }>;
    stored: ProtectedCheckpoint;
    headB: string;
  } {
    const records: Array<{ position: number; data: Uint8Array }> = [];
    const append = (entries: JournalEntry[]): void => {
      records.push({
        position: records.length + 1,
        data: encodeJournalRecord(entries, runId, protection.codec),
      });
    };
    const a1 = linkEntries(
      [{ type: 'ValueRecorded', epoch: 1, at: 1, seq: 0, name: 'uuid', value: 'u-1' }],
      chainGenesis(runId),
    );
    append(a1.entries);
    const cp: Checkpoint = {
      runId,
      seq: 1,
      epoch: 1,
      journalPosition: 1,
      entries: a1.entries,
      status: 'running',
      schemaVersion: 1,
      createdAt: 1,
    };
    const stored = throughStore(protectCheckpoint({ ...cp, chainHead: a1.head }, protection));
    const a2 = linkEntries([{ type: 'TimerScheduled', epoch: 1, at: 2, seq: 1, wakeAt: 9 }], a1.head);
    append(a2.entries);
    const marker: JournalEntry = { type: 'LeaseAcquired', epoch: 2, at: 3, workerId: 'w-b' };
    append([marker]);
    append(linkEntries([{ type: 'TimerFired', epoch: 1, at: 4, seq: 1 }], a2.head).entries); // zombie A
    const b = linkEntries([{ type: 'TimerFired', epoch: 2, at: 5, seq: 1 }], chainHeadOf([marker], a2.head));
    append(b.entries);
    return { records, stored, headB: b.head };
  }

  function resume(
    records: Array<{ position: number; data: Uint8Array }>,
    stored: ProtectedCheckpoint,
  ): string | undefined {
    const opened = openCheckpoint(stored, runId, protection);
    const tail = records
      .filter((r) => r.position > opened.journalPosition)
      .flatMap((r) =>
        decodeJournalRecord(r.data, runId, protection.codec, r.position).map((entry) => ({
          position: r.position,
          entry,
        })),
      );
    return verifyJournalTail(filterFencedEntries(tail, opened.epoch), runId, opened, protection);
  }

  it('verifies the effective entries after the checkpoint and returns the head to continue from', () => {
    const { records, stored, headB } = scenario();
    expect(resume(records, stored)).toBe(headB);
  });

  it('names the entry after a removed record, with its position and index among the effective entries', () => {
    const { records, stored } = scenario();
    const err = integrityError(() =>
      resume(
        records.filter((r) => r.position !== 2),
        stored,
      ),
    );
    // The blind lease marker (#1) carries no link; the new owner's first linked entry covers it.
    expect(err.entry).toBe(
      'journal after checkpoint 1: journal entry #2 (TimerFired of step #1, journal position 5)',
    );
  });

  it('finds a record of the current owner replayed at the end', () => {
    const { records, stored, headB } = scenario();
    const replayed = [...records, { position: 6, data: records[4]!.data }];
    expect(integrityError(() => resume(replayed, stored)).entry).toBe(
      'journal after checkpoint 1: journal entry #4 (TimerFired of step #1, journal position 6)',
    );
    // A replayed record of a fenced owner is dropped by the fence before the chain sees it.
    expect(resume([...records, { position: 6, data: records[1]!.data }], stored)).toBe(headB);
  });

  it('starts from the genesis without a checkpoint, and says entries were removed', () => {
    const { records } = scenario();
    const tail = records.slice(1).flatMap((r) =>
      decodeJournalRecord(r.data, runId, protection.codec, r.position).map((entry) => ({
        position: r.position,
        entry,
      })),
    );
    const err = integrityError(() =>
      verifyJournalTail(filterFencedEntries(tail), runId, undefined, protection),
    );
    expect(err.entry).toBe('journal entry #0 (TimerScheduled of step #1, journal position 2)');
    expect(err.message).toMatch(/entries before it were removed/);
  });

  it('checks nothing and keeps no head when the chain is off', () => {
    expect(
      verifyJournalTail(
        [{ type: 'TimerFired', epoch: 1, at: 1, seq: 0 }],
        runId,
        undefined,
        resolvePayloadProtection(),
      ),
    ).toBeUndefined();
  });
});
