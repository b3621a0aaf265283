import { describe, expect, it } from 'vitest';
import { encodeEntries } from '../codec.js';
import { CheckpointIntegrityError, CodecError } from '../../adapter/errors.js';
import type { JournalEntry } from '../../shared/journal.js';
import { decodeJournalRecord, encodeJournalRecord } from './journal-records.js';
import { IDENTITY_PAYLOAD_CODEC, isPayloadFrame } from './payload-codec.js';
import { resolvePayloadProtection } from './payload-config.js';
import { testKeys } from './test-keys.spec-helper.js';

const entries: JournalEntry[] = [
  { type: 'LeaseAcquired', epoch: 1, at: 1, workerId: 'w' },
  { type: 'ActivityCompleted', epoch: 1, at: 2, seq: 0, name: 'a', result: { card: '4242' }, attempts: 1 },
];

describe('journal records through the codec', () => {
  it('are the bytes of encodeEntries with nothing configured, so old readers still read them', () => {
    const bytes = encodeJournalRecord(entries, 'r1', IDENTITY_PAYLOAD_CODEC);
    expect(Buffer.from(bytes).equals(Buffer.from(encodeEntries(entries)))).toBe(true);
    expect(decodeJournalRecord(bytes, 'r1', IDENTITY_PAYLOAD_CODEC)).toEqual(entries);
  });

  it('round-trip encrypted, and name the position of a record that fails', () => {
    const { codec } = resolvePayloadProtection({ encryptionKeys: testKeys(['k1']).spec });
    const bytes = encodeJournalRecord(entries, 'r1', codec);
    expect(isPayloadFrame(bytes)).toBe(true);
    expect(decodeJournalRecord(bytes, 'r1', codec, 17)).toEqual(entries);
    expect(() => decodeJournalRecord(bytes, 'r2', codec, 17)).toThrow(CheckpointIntegrityError);
    expect(() => decodeJournalRecord(bytes, 'r2', codec, 17)).toThrow(
      /^run r2: journal record at position 17 failed verification: AES-256-GCM authentication with key k1 failed/,
    );
  });

  it('read records written before encryption only under the migration switch', () => {
    const spec = testKeys(['k1']).spec;
    const legacy = encodeEntries(entries);
    const strict = resolvePayloadProtection({ encryptionKeys: spec }).codec;
    const migrating = resolvePayloadProtection({ encryptionKeys: spec, allowPlaintext: true }).codec;
    expect(() => decodeJournalRecord(legacy, 'r1', strict, 3)).toThrow(
      /journal record at position 3 failed verification/,
    );
    expect(decodeJournalRecord(legacy, 'r1', migrating, 3)).toEqual(entries);
  });

  it('leave the record format check to decodeEntries once the frame verifies', () => {
    const { codec } = resolvePayloadProtection({ encryptionKeys: testKeys(['k1']).spec });
    const foreign = codec.encode(new TextEncoder().encode('{"v":99,"entries":[]}'), {
      runId: 'r1',
      what: 'journal record',
    });
    expect(() => decodeJournalRecord(foreign, 'r1', codec)).toThrow(CodecError);
  });
});
