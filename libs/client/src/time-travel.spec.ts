import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  openCheckpoint,
  resolvePayloadProtection,
  type JournalEntry,
  type ProtectedCheckpoint,
} from '@baton/core/runtime';
import { forkEntries, retryEntries, sealCheckpoint } from './time-travel.js';

const at = 1_700_000_000_000;
const marker = (epoch: number): JournalEntry => ({ type: 'LeaseAcquired', epoch, at, workerId: 'w' });
const done = (seq: number, name: string): JournalEntry => ({
  type: 'ActivityCompleted',
  epoch: 1,
  at,
  seq,
  name,
  result: name,
  attempts: 1,
});
const failed = (seq: number, name: string): JournalEntry => ({
  type: 'ActivityFailed',
  epoch: 1,
  at,
  seq,
  name,
  error: { name: 'Error', message: 'down' },
  attempts: 3,
});
const started = (seq: number, name: string): JournalEntry => ({
  type: 'ActivityStarted',
  epoch: 1,
  at,
  seq,
  name,
});
const runFailed: JournalEntry = {
  type: 'RunFailed',
  epoch: 1,
  at,
  error: { name: 'Error', message: 'down' },
};

describe('retryEntries', () => {
  it('drops the outcome and the failures the run ended on, with their start markers', () => {
    const entries = [marker(1), done(0, 'a'), started(1, 'pay'), failed(1, 'pay'), marker(2), runFailed];
    expect(retryEntries(entries)).toEqual([marker(1), done(0, 'a'), marker(2)]);
  });

  it('keeps a failure the workflow caught and went on from', () => {
    const entries = [done(0, 'a'), failed(1, 'optional'), done(2, 'b'), failed(3, 'pay'), runFailed];
    expect(retryEntries(entries)).toEqual([done(0, 'a'), failed(1, 'optional'), done(2, 'b')]);
  });

  it('drops only the outcome when the run failed in workflow code, after a successful step', () => {
    expect(retryEntries([done(0, 'a'), runFailed])).toEqual([done(0, 'a')]);
  });
});

describe('forkEntries', () => {
  it('keeps the steps in order without lease markers or the outcome', () => {
    const completed: JournalEntry = { type: 'RunCompleted', epoch: 2, at, result: 1 };
    expect(forkEntries([marker(1), done(0, 'a'), marker(2), done(1, 'b'), completed])).toEqual([
      done(0, 'a'),
      done(1, 'b'),
    ]);
  });
});

describe('sealCheckpoint', () => {
  const base = { runId: 'fork-1', seq: 1, epoch: 0, journalPosition: 0, status: 'running' as const };

  it('writes a plain checkpoint at the current schema version when protection is off', () => {
    const checkpoint = sealCheckpoint({ ...base, entries: [done(0, 'a')] }, resolvePayloadProtection({}, {}));
    expect(checkpoint).toMatchObject({ ...base, entries: [done(0, 'a')], schemaVersion: 1 });
    expect(checkpoint).not.toHaveProperty('chainHead');
  });

  it('relinks the chain from the new run, seals and signs, so a worker with the keys opens it', () => {
    const key = (id: string): string => `${id}:${randomBytes(32).toString('base64')}`;
    const protection = resolvePayloadProtection({ encryptionKeys: key('k1'), signingKeys: key('s1') }, {});
    // Entries linked for another run: their old links must not survive into the fork.
    const entries = [{ ...done(0, 'a'), prev: 'from-the-original' } as unknown as JournalEntry, done(1, 'b')];
    const stored = sealCheckpoint({ ...base, entries }, protection) as ProtectedCheckpoint;
    expect(stored).toMatchObject({
      entries: [],
      sealedEntries: expect.any(String),
      signature: { keyId: 's1' },
    });
    const opened = openCheckpoint(stored, 'fork-1', protection);
    expect(opened.entries.map((e) => (e as { name?: string }).name)).toEqual(['a', 'b']);
    expect(() => openCheckpoint(stored, 'another-run', protection)).toThrow(/another-run|fork-1/);
  });
});
