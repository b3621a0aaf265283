import { describe, expect, it } from 'vitest';
import {
  decodeEntries,
  decodeMessage,
  encodeEntries,
  encodeJson,
  encodeMessage,
  MAX_MESSAGE_DEPTH,
} from './codec.js';
import { toMs } from '../author/duration.js';
import { defineWorkflow } from '../author/workflow.js';
import { ConfigError, deserializeError, serializeError } from '../shared/errors.js';
import { isNonRetryable, NonRetryableError } from '../author/errors.js';
import { CodecError, FencedWriteError } from '../adapter/errors.js';
import { NonDeterminismError } from './errors.js';
import { runIdForKey } from '../shared/ids.js';
import { filterFencedEntries, type JournalEntry } from '../shared/journal.js';
import { SEALED_VALUE_FIELD } from './payload/sealed-shape.js';

describe('journal codec', () => {
  it('round-trips a batch of entries', () => {
    const entries: JournalEntry[] = [
      { type: 'LeaseAcquired', epoch: 2, at: 1, workerId: 'w' },
      { type: 'ActivityCompleted', epoch: 2, at: 2, seq: 0, name: 'a', result: { x: [1, 'y'] }, attempts: 1 },
    ];
    expect(decodeEntries(encodeEntries(entries), 'r')).toEqual(entries);
  });

  it('refuses an unknown codec version, naming the run and both versions', () => {
    const bytes = encodeJson({ v: 99, entries: [] });
    expect(() => decodeEntries(bytes, 'run-7')).toThrow(CodecError);
    expect(() => decodeEntries(bytes, 'run-7')).toThrow(
      /run-7 has codec version 99; this worker reads versions 1 to 3/,
    );
  });

  it('writes version 3 for a record holding an update entry, and refuses one without its id and name', () => {
    const accepted: JournalEntry = {
      type: 'UpdateAccepted',
      epoch: 1,
      at: 1,
      updateId: 'u1',
      name: 'add',
      args: { n: 1 },
    };
    const completed: JournalEntry = {
      type: 'UpdateCompleted',
      epoch: 1,
      at: 2,
      updateId: 'u1',
      name: 'add',
      result: 2,
    };
    const lease: JournalEntry = { type: 'LeaseAcquired', epoch: 1, at: 0, workerId: 'w' };
    const version = (bytes: Uint8Array): unknown =>
      (JSON.parse(new TextDecoder().decode(bytes)) as { v: unknown }).v;
    expect(version(encodeEntries([lease]))).toBe(1);
    expect(version(encodeEntries([lease, accepted]))).toBe(3);
    expect(version(encodeEntries([completed]))).toBe(3);
    expect(decodeEntries(encodeEntries([lease, accepted, completed]), 'r')).toEqual([
      lease,
      accepted,
      completed,
    ]);
    const nameless = encodeJson({
      v: 3,
      entries: [{ type: 'UpdateAccepted', epoch: 1, at: 1, updateId: '' }],
    });
    expect(() => decodeEntries(nameless, 'run-8')).toThrow(
      /run-8 holds an UpdateAccepted without a non-empty 'updateId' and a 'name'/,
    );
  });

  it('writes version 2 only for a record holding a payload reference, which a version-1 reader refuses', () => {
    const plain: JournalEntry = {
      type: 'ActivityCompleted',
      epoch: 1,
      at: 1,
      seq: 0,
      name: 'a',
      result: 1,
      attempts: 1,
    };
    const ref = { sha256: 'a'.repeat(64), size: 9, run: 'r' };
    const byRef = { ...plain, resultRef: ref } as JournalEntry;
    const version = (bytes: Uint8Array): unknown =>
      (JSON.parse(new TextDecoder().decode(bytes)) as { v: unknown }).v;
    expect(version(encodeEntries([plain]))).toBe(1);
    expect(version(encodeEntries([plain, byRef]))).toBe(2);
    expect(decodeEntries(encodeEntries([plain, byRef]), 'r')).toEqual([plain, byRef]);
    const start = { kind: 'start', runId: 'r', workflow: 'w', version: 1, enqueuedAt: 1 } as const;
    expect(version(encodeMessage({ ...start, input: 1 }))).toBe(1);
    expect(version(encodeMessage({ ...start, inputRef: ref }))).toBe(2);
    expect(decodeMessage(encodeMessage({ ...start, inputRef: ref }))).toEqual({ ...start, inputRef: ref });
    // A sealed input (docs/integrity.md) is version 3, which a version-2 reader refuses.
    const sealed = { [SEALED_VALUE_FIELD]: 1, key: 'k1', frame: 'AAAA' } as const;
    expect(version(encodeMessage({ ...start, input: sealed }))).toBe(3);
    expect(decodeMessage(encodeMessage({ ...start, input: sealed }))).toEqual({ ...start, input: sealed });
    expect(() => decodeMessage(encodeJson({ ...start, input: { [SEALED_VALUE_FIELD]: 1 }, v: 3 }))).toThrow(
      /start message field 'input' has the '\$baton.sealed' marker but not the sealed form/,
    );
    expect(() => decodeMessage(encodeJson({ ...start, v: 4 }))).toThrow(
      /run message has codec version 4; this worker reads versions 1 to 3/,
    );
  });

  it('writes version 3 only for a record holding a durable promise entry', () => {
    const version = (bytes: Uint8Array): unknown =>
      (JSON.parse(new TextDecoder().decode(bytes)) as { v: unknown }).v;
    const timer: JournalEntry = { type: 'TimerFired', epoch: 1, at: 1, seq: 0 };
    const made: JournalEntry = {
      type: 'PromiseCreated',
      epoch: 1,
      at: 1,
      seq: 1,
      token: 'bp_x',
      timeoutAt: null,
    };
    const done: JournalEntry = {
      type: 'PromiseCompleted',
      epoch: 1,
      at: 2,
      seq: 1,
      outcome: 'resolved',
      valueRef: { sha256: 'c'.repeat(64), size: 3, run: 'r' },
    };
    expect(version(encodeEntries([timer]))).toBe(1);
    expect(version(encodeEntries([timer, made]))).toBe(3);
    expect(version(encodeEntries([done]))).toBe(3);
    expect(decodeEntries(encodeEntries([timer, made, done]), 'r')).toEqual([timer, made, done]);
  });

  it('writes version 3 for a record holding an AttributesSet, and refuses a malformed one', () => {
    const set: JournalEntry = {
      type: 'AttributesSet',
      epoch: 1,
      at: 1,
      seq: 0,
      attributes: { customerId: { type: 'keyword', value: '42' }, tier: null },
    };
    const marker: JournalEntry = { type: 'LeaseAcquired', epoch: 1, at: 1, workerId: 'w' };
    const version = (bytes: Uint8Array): unknown =>
      (JSON.parse(new TextDecoder().decode(bytes)) as { v: unknown }).v;
    expect(version(encodeEntries([marker]))).toBe(1);
    expect(version(encodeEntries([marker, set]))).toBe(3);
    expect(decodeEntries(encodeEntries([marker, set]), 'r')).toEqual([marker, set]);
    expect(() =>
      decodeEntries(encodeJson({ v: 3, entries: [{ type: 'AttributesSet', epoch: 1, seq: 0 }] }), 'run-3'),
    ).toThrow(/run-3 holds an AttributesSet without an integer 'seq' and an 'attributes' object/);
  });

  it('refuses bytes that are not JSON and entries of unknown type', () => {
    expect(() => decodeEntries(new Uint8Array([0xff, 0xfe]), 'r')).toThrow(/not valid UTF-8 JSON/);
    expect(() => decodeEntries(encodeJson({ v: 1, entries: [{ type: 'Bogus', epoch: 1 }] }), 'r')).toThrow(
      /unknown type Bogus/,
    );
  });
});

describe('message codec', () => {
  it('round-trips every kind', () => {
    const start = {
      kind: 'start',
      runId: 'r1',
      workflow: 'w',
      version: 1,
      input: { a: 1 },
      enqueuedAt: 5,
    } as const;
    expect(decodeMessage(encodeMessage(start))).toEqual(start);
    const signal = { kind: 'signal', runId: 'r1', name: 'go', payload: true, signalId: 's' } as const;
    expect(decodeMessage(encodeMessage(signal))).toEqual(signal);
  });

  it('names the field that is wrong', () => {
    expect(() => decodeMessage(encodeJson({ v: 1, kind: 'start', runId: 'r', version: 1 }))).toThrow(
      /'workflow'/,
    );
    expect(() =>
      decodeMessage(encodeJson({ v: 1, kind: 'start', runId: 'r', workflow: 'w', version: 'x' })),
    ).toThrow(/'version'/);
    expect(() => decodeMessage(encodeJson({ v: 1, kind: 'explode', runId: 'r' }))).toThrow(
      /unknown kind "explode"/,
    );
    expect(() => decodeMessage(encodeJson([1, 2]))).toThrow(/must be a JSON object/);
  });
});

describe('fencing filter', () => {
  it('ignores an entry written under a stale epoch after a newer LeaseAcquired marker', () => {
    const journal: JournalEntry[] = [
      { type: 'LeaseAcquired', epoch: 1, at: 0, workerId: 'old' },
      { type: 'ActivityCompleted', epoch: 1, at: 1, seq: 0, name: 'a', result: 1, attempts: 1 },
      { type: 'LeaseAcquired', epoch: 2, at: 2, workerId: 'new' },
      { type: 'ActivityCompleted', epoch: 1, at: 3, seq: 1, name: 'b', result: 'zombie', attempts: 1 },
      { type: 'ActivityCompleted', epoch: 2, at: 4, seq: 1, name: 'b', result: 'owner', attempts: 1 },
    ];
    const kept = filterFencedEntries(journal.map((entry) => ({ entry }))).map((p) => p.entry);
    expect(kept).toHaveLength(4);
    expect(kept.find((e) => e.type === 'ActivityCompleted' && e.seq === 1)).toMatchObject({
      result: 'owner',
    });
  });

  it('starts from the epoch a checkpoint established', () => {
    const tail: JournalEntry[] = [
      { type: 'ActivityCompleted', epoch: 2, at: 1, seq: 3, name: 'a', result: 1, attempts: 1 },
    ];
    expect(
      filterFencedEntries(
        tail.map((entry) => ({ entry })),
        3,
      ),
    ).toEqual([]);
  });
});

describe('errors', () => {
  it('serializes name, code, retryable and cause, and deserializes them back', () => {
    const err = new FencedWriteError('r', 3, 'checkpoints.write');
    const wrapped = new Error('outer', { cause: err });
    const data = serializeError(wrapped);
    expect(data.cause).toMatchObject({
      name: 'FencedWriteError',
      code: 'BATON_FENCED_WRITE',
      retryable: false,
    });
    const back = deserializeError(data);
    expect(back.message).toBe('outer');
    expect((back.cause as Error & { code: string }).code).toBe('BATON_FENCED_WRITE');
    expect(serializeError('plain string')).toEqual({ name: 'NonError', message: 'plain string' });
  });

  it('tells retryable from terminal errors', () => {
    expect(isNonRetryable(new NonRetryableError('no'))).toBe(true);
    expect(isNonRetryable(new Error('maybe'))).toBe(false);
    expect(isNonRetryable(Object.assign(new Error('x'), { retryable: false }))).toBe(true);
  });

  it('NonDeterminismError names the run, the step and both sides', () => {
    const err = new NonDeterminismError('run-9', 4, 'activity:a', 'activity:b');
    expect(err.message).toMatch(
      /run run-9: step #4 replayed as activity:b but the journal recorded activity:a/,
    );
    expect(err.name).toBe('NonDeterminismError');
    expect(err.code).toBe('BATON_NON_DETERMINISM');
  });
});

describe('durations and ids', () => {
  it('parses durations and rejects garbage with the option named', () => {
    expect(toMs('250ms')).toBe(250);
    expect(toMs('10m')).toBe(600_000);
    expect(toMs('3d')).toBe(259_200_000);
    expect(toMs(42)).toBe(42);
    expect(() => toMs('soon', 'ctx.sleep duration')).toThrow(ConfigError);
    expect(() => toMs('soon', 'ctx.sleep duration')).toThrow(/ctx.sleep duration 'soon'/);
  });

  it('derives the same run id from the same workflow and key, and different ids otherwise', () => {
    expect(runIdForKey('loan', 'k1')).toBe(runIdForKey('loan', 'k1'));
    expect(runIdForKey('loan', 'k1')).not.toBe(runIdForKey('loan', 'k2'));
    expect(runIdForKey('loan', 'k1')).not.toBe(runIdForKey('other', 'k1'));
    expect(runIdForKey('loan', 'k1')).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});

describe('message codec: optional fields and depth', () => {
  const start = { v: 1, kind: 'start', runId: 'r', workflow: 'w', version: 1, enqueuedAt: 1 };
  const decode = (fields: Record<string, unknown>): unknown => decodeMessage(encodeJson(fields));

  it('refuses an idempotencyKey or traceparent that is not a string, naming the field', () => {
    expect(() => decode({ ...start, idempotencyKey: { a: 1 } })).toThrow(
      /start message field 'idempotencyKey' must be a string or null when present; found an object/,
    );
    expect(() => decode({ ...start, idempotencyKey: 7 })).toThrow(/'idempotencyKey'.*found a number/);
    expect(() => decode({ ...start, traceparent: ['x'] })).toThrow(/'traceparent'.*found an array/);
    expect(() => decode({ v: 1, kind: 'wake', runId: 'r', reason: 'timer', traceparent: true })).toThrow(
      /wake message field 'traceparent'/,
    );
  });

  it('refuses the start fields the client refuses, with the same check (start-fields.ts), naming the field', () => {
    expect(() => decode({ ...start, version: 0 })).toThrow(
      /^start message field 'version' must be a positive integer .*; found 0$/,
    );
    expect(() => decode({ ...start, version: 2.5 })).toThrow(/'version'.*found 2\.5/);
    expect(() => decode({ ...start, workflow: 'has spaces' })).toThrow(
      /^start message field 'workflow' must be 1-128 characters .*; found "has spaces"$/,
    );
    expect(() => decode({ ...start, workflow: 'x'.repeat(129) })).toThrow(/'workflow'/);
    expect(() => decode({ ...start, idempotencyKey: '' })).toThrow(
      /^start message field 'idempotencyKey' must be a non-empty string when given; found ""$/,
    );
    // What defineWorkflow accepts, the decoder accepts.
    const edge = { ...start, workflow: 'a.b:c-d_e', version: 1, idempotencyKey: 'k' };
    expect(decode(edge)).toMatchObject({ workflow: 'a.b:c-d_e', idempotencyKey: 'k' });
    expect(defineWorkflow({ name: 'a.b:c-d_e', version: 1, run: async () => null }).name).toBe('a.b:c-d_e');
    expect(() => defineWorkflow({ name: 'has spaces', version: 1, run: async () => null })).toThrow(
      /workflow name 'has spaces' is invalid/,
    );
    expect(() => defineWorkflow({ name: 'w', version: 0, run: async () => null })).toThrow(
      /version must be a positive integer, got 0/,
    );
  });

  it('reads a null idempotencyKey or traceparent as absent', () => {
    const message = decode({ ...start, idempotencyKey: null, traceparent: null });
    expect(message).not.toHaveProperty('idempotencyKey');
    expect(message).not.toHaveProperty('traceparent');
    expect(decode({ ...start, idempotencyKey: 'k', traceparent: 't' })).toMatchObject({
      idempotencyKey: 'k',
      traceparent: 't',
    });
  });

  it('checks every other optional field of every kind', () => {
    const ref = { sha256: 'a'.repeat(64), size: 3, run: 'r' };
    expect(decode({ ...start, inputRef: ref })).toMatchObject({ inputRef: ref });
    expect(() => decode({ ...start, inputRef: 'abc' })).toThrow(/'inputRef' must be a payload reference/);
    expect(() => decode({ ...start, inputRef: { ...ref, sha256: 'xyz' } })).toThrow(/'inputRef'/);
    expect(() => decode({ ...start, enqueuedAt: '5' })).toThrow(/'enqueuedAt' must be a number/);
    const signal = { v: 2, kind: 'signal', runId: 'r', name: 'go', signalId: 's' };
    expect(decode({ ...signal, payloadRef: ref })).toMatchObject({ payloadRef: ref });
    expect(() => decode({ ...signal, payloadRef: { ...ref, size: -1 } })).toThrow(
      /signal message field 'payloadRef'/,
    );
    expect(() => decode({ v: 1, kind: 'cancel', runId: 'r', reason: { why: 1 } })).toThrow(
      /cancel message field 'reason' must be a string when present; found an object/,
    );
    expect(() => decode({ v: 1, kind: 'cancel', runId: 'r', reason: null })).toThrow(/'reason'.*found null/);
    expect(() => decode({ v: 1, kind: 'resume', runId: 'r', reason: 3, since: 1 })).toThrow(/'reason'/);
    expect(() => decode({ v: 1, kind: 'resume', runId: 'r', reason: 'reaped', since: 'now' })).toThrow(
      /'since' must be a number/,
    );
    expect(() => decode({ v: 1, kind: 'wake', runId: 'r' })).toThrow(/wake message field 'reason'/);
  });

  it('refuses a message nested deeper than the limit, naming the depth and the limit', () => {
    const depth = 200_000;
    const bytes = new TextEncoder().encode(
      `{"v":1,"kind":"start","runId":"r","workflow":"w","version":1,"input":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    );
    expect(() => decodeMessage(bytes)).toThrow(
      new RegExp(
        `start message nests ${depth + 1} levels deep; the limit of a run message is ${MAX_MESSAGE_DEPTH}`,
      ),
    );
    // At the limit exactly, the message is read.
    let input: unknown = 1;
    for (let level = 2; level <= MAX_MESSAGE_DEPTH; level++) input = [input];
    expect(decode({ ...start, input })).toMatchObject({ input });
    expect(() => decode({ ...start, input: [input] })).toThrow(`nests ${MAX_MESSAGE_DEPTH + 1} levels deep`);
  });
});
