import { describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../adapter/contracts/checkpoints.js';
import { CheckpointIntegrityError } from '../../adapter/errors.js';
import { MissingKeyError } from '../errors.js';
import { parseKeyring } from './keyring.js';
import { signCheckpoint, verifyCheckpoint, type ProtectedCheckpoint } from './checkpoint-signing.js';
import { expectNoLeak, testKeyring, testKeys } from './test-keys.spec-helper.js';

function checkpoint(): ProtectedCheckpoint {
  return {
    runId: 'run-7',
    seq: 3,
    epoch: 2,
    journalPosition: 41,
    entries: [
      { type: 'LeaseAcquired', epoch: 2, at: 5, workerId: 'w-2' },
      {
        type: 'ActivityCompleted',
        epoch: 2,
        at: 6,
        seq: 0,
        name: 'pay',
        result: { cents: 500 },
        attempts: 1,
      },
    ],
    status: 'running',
    schemaVersion: 1,
    createdAt: 1_700_000_000_000,
    chainHead: 'head-hash',
  };
}

function signatureError(fn: () => unknown): CheckpointIntegrityError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(CheckpointIntegrityError);
  const err = caught as CheckpointIntegrityError;
  expect(err.runId).toBe('run-7');
  expect(err.entry).toBe('checkpoint 3');
  return err;
}

describe('checkpoint signatures', () => {
  const keys = testKeyring('signing', ['s1']);

  it('signs with the active key and verifies, also after a JSON round trip with keys reordered', () => {
    const signed = signCheckpoint(checkpoint(), keys.ring);
    expect(signed.signature.keyId).toBe('s1');
    expect(signed.signature.mac).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(() => verifyCheckpoint(signed, keys.ring)).not.toThrow();
    const stored = JSON.parse(
      JSON.stringify(Object.fromEntries(Object.entries(signed).reverse())),
    ) as Checkpoint;
    expect(() => verifyCheckpoint(stored, keys.ring)).not.toThrow();
    expect(signCheckpoint(signed, keys.ring).signature).toEqual(signed.signature);
  });

  it('detects a change to any field, nested ones included', () => {
    const signed = signCheckpoint(checkpoint(), keys.ring);
    const changes: Array<[string, (c: Record<string, unknown>) => void]> = [
      ['journalPosition', (c) => (c.journalPosition = 40)],
      ['epoch', (c) => (c.epoch = 3)],
      ['status', (c) => (c.status = 'completed')],
      ['schemaVersion', (c) => (c.schemaVersion = 2)],
      ['createdAt', (c) => (c.createdAt = 0)],
      ['chainHead', (c) => (c.chainHead = 'other')],
      ['entries removed', (c) => (c.entries as unknown[]).pop()],
      ['entry result', (c) => ((c.entries as Array<{ result?: unknown }>)[1]!.result = { cents: 5 })],
      ['field added', (c) => (c.sealedEntries = 'AAAA')],
      ['field dropped', (c) => delete c.chainHead],
      [
        'mac',
        (c) =>
          ((c.signature as { mac: string }).mac = signCheckpoint(
            checkpoint(),
            testKeyring('signing', ['s1']).ring,
          ).signature.mac),
      ],
    ];
    for (const [name, change] of changes) {
      const tampered = structuredClone(signed) as unknown as Record<string, unknown>;
      change(tampered);
      const err = signatureError(() =>
        verifyCheckpoint(tampered as unknown as ProtectedCheckpoint, keys.ring),
      );
      expect(err.message, name).toMatch(/its HMAC-SHA256 signature \(key s1\) does not match its content/);
    }
  });

  it('detects a changed run id or seq, naming the checkpoint as it now reads', () => {
    const signed = signCheckpoint(checkpoint(), keys.ring);
    for (const [changed, message] of [
      [
        { ...signed, runId: 'run-8' },
        /^run run-8: checkpoint 3 failed verification: its HMAC-SHA256 signature/,
      ],
      [{ ...signed, seq: 4 }, /^run run-7: checkpoint 4 failed verification: its HMAC-SHA256 signature/],
    ] as const) {
      expect(() => verifyCheckpoint(changed, keys.ring)).toThrow(CheckpointIntegrityError);
      expect(() => verifyCheckpoint(changed, keys.ring)).toThrow(message);
    }
  });

  it('refuses a missing signature unless told signatures are not required yet', () => {
    expect(signatureError(() => verifyCheckpoint(checkpoint(), keys.ring)).message).toMatch(
      /it carries no signature but BATON_SIGNING_KEYS is configured.*BATON_ALLOW_PLAINTEXT=true/,
    );
    expect(() => verifyCheckpoint(checkpoint(), keys.ring, { requireSignature: false })).not.toThrow();
    // A signature that is there is checked all the same.
    const forged = { ...checkpoint(), signature: { keyId: 's1', mac: 'AAAA' } };
    signatureError(() => verifyCheckpoint(forged, keys.ring, { requireSignature: false }));
  });

  it('refuses a malformed signature field', () => {
    const bad = { ...checkpoint(), signature: { keyId: 's1' } } as unknown as ProtectedCheckpoint;
    expect(signatureError(() => verifyCheckpoint(bad, keys.ring)).message).toMatch(
      /signature field is malformed/,
    );
  });

  it('verifies across a rotation while the old key stays, and names it once dropped', () => {
    const s1 = testKeys(['s1']);
    const s2 = testKeys(['s2']);
    const old = signCheckpoint(checkpoint(), parseKeyring(s1.spec, { purpose: 'signing' }));
    const rotated = parseKeyring(`${s2.spec},${s1.spec}`, { purpose: 'signing' });
    expect(() => verifyCheckpoint(old, rotated)).not.toThrow();
    expect(signCheckpoint(checkpoint(), rotated).signature.keyId).toBe('s2');
    const err = signatureError(() => verifyCheckpoint(old, parseKeyring(s2.spec, { purpose: 'signing' })));
    expect(err.message).toMatch(
      /it is signed with key s1, which is not in BATON_SIGNING_KEYS \(it holds s2\); add that key back/,
    );
    expectNoLeak(err.message, [...s1.secrets, ...s2.secrets]);
    expect(err).toBeInstanceOf(MissingKeyError);
    expect(err).toMatchObject({ code: 'BATON_MISSING_KEY', keyId: 's1', purpose: 'signing' });
    // An id that is not an id is not echoed.
    const weird = { ...old, signature: { keyId: 'x'.repeat(50), mac: old.signature.mac } };
    expect(signatureError(() => verifyCheckpoint(weird, rotated)).message).toMatch(
      /signed with key \(malformed id\)/,
    );
  });

  it('fails with a key of the same id but other bytes, naming the id only', () => {
    const signed = signCheckpoint(checkpoint(), keys.ring);
    const other = testKeyring('signing', ['s1']);
    const err = signatureError(() => verifyCheckpoint(signed, other.ring));
    expect(err.message).toMatch(/or key s1 in BATON_SIGNING_KEYS is not the key that signed it/);
    expectNoLeak(err.message, [...keys.secrets, ...other.secrets]);
  });
});
