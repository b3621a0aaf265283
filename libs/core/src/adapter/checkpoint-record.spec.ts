import { describe, expect, it } from 'vitest';
import { checkStoredCheckpoint, parseStoredCheckpoint, parseStoredSummary } from './checkpoint-record.js';
import { CheckpointIntegrityError, CheckpointUnreadableError } from './errors.js';

const GOOD = {
  runId: 'r1',
  seq: 4,
  epoch: 2,
  journalPosition: 40,
  entries: [{ type: 'LeaseAcquired', epoch: 2, at: 1, workerId: 'w' }],
  status: 'running',
  schemaVersion: 1,
  createdAt: 1_700_000_000_000,
};

describe('reading a stored checkpoint', () => {
  it('returns a well-formed checkpoint as it is, extra fields (signature, sealed entries) included', () => {
    const signed = { ...GOOD, entries: [], sealedEntries: 'AAAA', signature: { keyId: 's1' } };
    expect(parseStoredCheckpoint(JSON.stringify(signed), 'r1')).toEqual(signed);
  });

  it('names the run and the seq it was given for a record that is not JSON, keeping the parse error as cause', () => {
    const err = (() => {
      try {
        parseStoredCheckpoint('{"runId":"r1","entries\u0001":[]}', 'r1', 4);
      } catch (e) {
        return e as CheckpointUnreadableError;
      }
    })();
    expect(err).toBeInstanceOf(CheckpointUnreadableError);
    expect(err).toBeInstanceOf(CheckpointIntegrityError);
    expect(err).toMatchObject({
      name: 'CheckpointUnreadableError',
      code: 'BATON_CHECKPOINT_UNREADABLE',
      runId: 'r1',
      seq: 4,
    });
    expect(err?.message).toMatch(
      /^run r1: checkpoint 4 failed verification: its stored record is not JSON \(/,
    );
    expect(err?.message).toContain('resume from an older checkpoint');
    expect(err?.cause).toBeInstanceOf(SyntaxError);
  });

  it.each([
    ['entries not a list', { ...GOOD, entries: { 0: 'x' } }, /its entries field is an object, not a list/],
    [
      'an entry without a type',
      { ...GOOD, entries: [{ epoch: 1 }] },
      /its entry #0 is an object, not a journal entry/,
    ],
    ['status missing', { ...GOOD, status: undefined }, /its status is missing/],
    ['an unknown status', { ...GOOD, status: 'odd' }, /its status is "odd", not one of running/],
    ['a seq that is not a whole number', { ...GOOD, seq: 1.5 }, /its seq is number 1.5, not a whole number/],
    ['journalPosition a string', { ...GOOD, journalPosition: '40' }, /its journalPosition is "40"/],
    ['a bare string', 'garbage', /its stored record is "garbage", not a checkpoint object/],
    ['a list', [GOOD], /its stored record is a list/],
  ])('refuses %s', (_label, value, message) => {
    expect(() => checkStoredCheckpoint(value, 'r1', 4)).toThrow(message);
    expect(() => checkStoredCheckpoint(value, 'r1', 4)).toThrow(CheckpointUnreadableError);
  });

  it('names the seq the body holds when the store could not say, and none when neither knows', () => {
    expect(() => checkStoredCheckpoint({ ...GOOD, entries: 'x' }, 'r1')).toThrow(/^run r1: checkpoint 4 /);
    expect(() => checkStoredCheckpoint('x', 'r1')).toThrow(/^run r1: a checkpoint failed verification/);
  });

  it('reads a summary, and refuses one that is not JSON or lacks a number', () => {
    const summary = {
      seq: 1,
      epoch: 1,
      journalPosition: 10,
      status: 'running',
      schemaVersion: 1,
      createdAt: 1,
      size: 9,
    };
    expect(parseStoredSummary(JSON.stringify(summary), 'r1', 0)).toEqual(summary);
    expect(() => parseStoredSummary('{', 'r1', 2)).toThrow(
      /summary of its checkpoint #3 in the list is not JSON/,
    );
    expect(() => parseStoredSummary(JSON.stringify({ ...summary, size: 'x' }), 'r1', 0)).toThrow(
      /has size "x", not a number/,
    );
  });
});
