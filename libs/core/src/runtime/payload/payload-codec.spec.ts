import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodeEntries } from '../codec.js';
import { CheckpointIntegrityError } from '../../adapter/errors.js';
import { MissingKeyError } from '../errors.js';
import { parseKeyring } from './keyring.js';
import {
  createPayloadCodec,
  FRAME_FLAG_COMPRESSED,
  FRAME_FLAG_ENCRYPTED,
  FRAME_MAGIC,
  IDENTITY_PAYLOAD_CODEC,
  isPayloadFrame,
  type PayloadCodec,
  type PayloadContext,
} from './payload-codec.js';
import { expectNoLeak, testKeyring, testKeys } from './test-keys.spec-helper.js';

const ctx: PayloadContext = { runId: 'run-1', what: 'journal record' };
const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');
/** A JSON record that compresses well and is above the default threshold. */
const bigRecord = encodeEntries(
  Array.from({ length: 40 }, (_, seq) => ({
    type: 'ActivityCompleted' as const,
    epoch: 1,
    at: 1_700_000_000_000,
    seq,
    name: 'charge-card',
    result: { ok: true, customer: 'cus_1234567890', note: 'the quick brown fox' },
    attempts: 1,
  })),
);
const smallRecord = encodeEntries([{ type: 'LeaseAcquired', epoch: 1, at: 1, workerId: 'w-1' }]);

/** The CheckpointIntegrityError `fn` throws. */
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

function flip(bytes: Uint8Array, index: number, mask: number): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy[index]! ^= mask;
  return copy;
}

describe('identity codec', () => {
  it('returns the very same Uint8Array both ways when nothing is configured', () => {
    const codec = createPayloadCodec();
    expect(codec.identity).toBe(true);
    expect(codec.encode(bigRecord, ctx)).toBe(bigRecord);
    expect(codec.decode(bigRecord, ctx)).toBe(bigRecord);
    expect(IDENTITY_PAYLOAD_CODEC.encode(smallRecord, ctx)).toBe(smallRecord);
    const notJson = new Uint8Array([1, 2, 3]);
    expect(IDENTITY_PAYLOAD_CODEC.decode(notJson, ctx)).toBe(notJson);
  });

  it('still reads compressed frames, so turning compression off loses nothing', () => {
    const framed = createPayloadCodec({ compressThresholdBytes: 0 }).encode(bigRecord, ctx);
    expect(isPayloadFrame(framed)).toBe(true);
    expect(text(IDENTITY_PAYLOAD_CODEC.decode(framed, ctx))).toBe(text(bigRecord));
  });

  it('names the key when it meets an encrypted frame and has no keys', () => {
    const { ring } = testKeyring('encryption', ['k1']);
    const framed = createPayloadCodec({ encryption: ring }).encode(smallRecord, ctx);
    expect(integrityError(() => IDENTITY_PAYLOAD_CODEC.decode(framed, ctx)).message).toBe(
      'run run-1: journal record failed verification: it is encrypted with key k1 but no encryption key is configured; ' +
        'set BATON_ENCRYPTION_KEYS with key k1 in it',
    );
  });
});

describe('compression', () => {
  const codec = createPayloadCodec({ compressThresholdBytes: 1024 });

  it('compresses a payload at or above the threshold and restores it', () => {
    const framed = codec.encode(bigRecord, ctx);
    expect(Array.from(framed.subarray(0, 4))).toEqual([FRAME_MAGIC, 1, FRAME_FLAG_COMPRESSED, 0]);
    expect(framed.length).toBeLessThan(bigRecord.length / 4);
    expect(text(codec.decode(framed, ctx))).toBe(text(bigRecord));
  });

  it('leaves a payload below the threshold, or one that would not shrink, as it is', () => {
    expect(codec.encode(smallRecord, ctx)).toBe(smallRecord);
    const noise = randomBytes(4096);
    expect(codec.encode(noise, ctx)).toBe(noise);
    expect(codec.decode(smallRecord, ctx)).toBe(smallRecord);
  });

  it('refuses a corrupt or truncated compressed body, and one that inflates past the limit', () => {
    const framed = codec.encode(bigRecord, ctx);
    expect(integrityError(() => codec.decode(framed.subarray(0, framed.length - 9), ctx)).message).toMatch(
      /its compressed body is corrupt/,
    );
    // The zlib stream ends in an Adler-32 of the content: a flipped byte does not pass silently.
    expect(integrityError(() => codec.decode(flip(framed, framed.length - 1, 0x01), ctx)).message).toMatch(
      /corrupt/,
    );
    const bomb = Buffer.concat([
      Buffer.from([FRAME_MAGIC, 1, FRAME_FLAG_COMPRESSED, 0]),
      deflateSync(Buffer.alloc(10_000)),
    ]);
    const limited = createPayloadCodec({ compressThresholdBytes: 0, maxDecodedBytes: 1000 });
    expect(integrityError(() => limited.decode(bomb, ctx)).message).toMatch(
      /decompresses to more than 1000 bytes/,
    );
  });
});

describe('encryption', () => {
  const keys = testKeyring('encryption', ['k1']);
  const codec = createPayloadCodec({ encryption: keys.ring, compressThresholdBytes: 1024 });

  it('round-trips small (encrypted) and large (compressed, then encrypted) payloads', () => {
    const small = codec.encode(smallRecord, ctx);
    expect(small[2]).toBe(FRAME_FLAG_ENCRYPTED);
    expect(text(codec.decode(small, ctx))).toBe(text(smallRecord));
    const big = codec.encode(bigRecord, ctx);
    expect(big[2]).toBe(FRAME_FLAG_ENCRYPTED | FRAME_FLAG_COMPRESSED);
    expect(text(codec.decode(big, ctx))).toBe(text(bigRecord));
    expect(codec.identity).toBe(false);
  });

  it('hides the content and uses a fresh IV for every message', () => {
    const a = codec.encode(smallRecord, ctx);
    const b = codec.encode(smallRecord, ctx);
    expect(text(a)).not.toContain('LeaseAcquired');
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
    expect(Buffer.from(a.subarray(6, 18)).equals(Buffer.from(b.subarray(6, 18)))).toBe(false);
  });

  it('encrypts an empty payload too', () => {
    const empty = new Uint8Array(0);
    expect(codec.decode(codec.encode(empty, ctx), ctx).length).toBe(0);
  });

  it('binds a frame to its run and purpose', () => {
    const framed = codec.encode(smallRecord, ctx);
    const other = integrityError(() => codec.decode(framed, { runId: 'run-2', what: ctx.what }));
    expect(other.runId).toBe('run-2');
    expect(other.message).toMatch(/authentication with key k1 failed.*another run or purpose/);
    integrityError(() => codec.decode(framed, { runId: ctx.runId, what: 'checkpoint 1' }));
  });

  it('detects a change to any byte of any region: magic, version, flags, key id, IV, ciphertext, tag', () => {
    const lenient = createPayloadCodec({ encryption: keys.ring, allowPlaintext: true });
    for (const payload of [smallRecord, bigRecord]) {
      const framed = codec.encode(payload, ctx);
      for (let i = 0; i < framed.length; i++) {
        for (const mask of [0x01, 0x02, 0x80, 0xff]) {
          const tampered = flip(framed, i, mask);
          for (const reader of [codec, lenient]) {
            expect(() => reader.decode(tampered, ctx), `byte ${i} ^ 0x${mask.toString(16)}`).toThrow(
              CheckpointIntegrityError,
            );
          }
        }
      }
    }
  });

  it('detects a frame cut short at any length, and says so when the header is incomplete', () => {
    const framed = codec.encode(smallRecord, ctx);
    for (let length = 0; length < framed.length; length++) {
      integrityError(() => codec.decode(framed.subarray(0, length), ctx));
    }
    expect(integrityError(() => codec.decode(framed.subarray(0, 20), ctx)).message).toMatch(
      /its frame is truncated: 20 bytes where the header needs at least 34/,
    );
  });

  it('names an unknown frame version and unknown flags', () => {
    const framed = codec.encode(smallRecord, ctx);
    const v2 = Uint8Array.from(framed);
    v2[1] = 2;
    expect(integrityError(() => codec.decode(v2, ctx)).message).toMatch(
      /frame format version is 2 but this Baton reads version 1; if a newer Baton wrote it, upgrade this worker/,
    );
    const flags = Uint8Array.from(framed);
    flags[2] = 0x42;
    expect(integrityError(() => codec.decode(flags, ctx)).message).toMatch(/unknown flags 0x42/);
  });

  it('carries a stable code, the run, the payload named by its label, and is not retryable', () => {
    const err = integrityError(() =>
      codec.decode(smallRecord, { ...ctx, label: 'journal record at position 17' }),
    );
    expect(err.code).toBe('BATON_INTEGRITY');
    // Plaintext under encryption has its own class, still an integrity failure.
    expect(err.name).toBe('PlaintextRefusedError');
    expect(err).toBeInstanceOf(CheckpointIntegrityError);
    expect(err.runId).toBe('run-1');
    expect(err.entry).toBe('journal record at position 17');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(
      /^run run-1: journal record at position 17 failed verification: it is not encrypted/,
    );
  });
});

describe('plaintext policy under encryption', () => {
  const { ring } = testKeyring('encryption', ['k1']);
  const strict = createPayloadCodec({ encryption: ring });
  const lenient = createPayloadCodec({ encryption: ring, allowPlaintext: true });
  const compressedOnly = createPayloadCodec({ compressThresholdBytes: 0 }).encode(bigRecord, ctx);

  it('refuses plain records and unencrypted frames, pointing at BATON_ALLOW_PLAINTEXT', () => {
    expect(integrityError(() => strict.decode(smallRecord, ctx)).message).toMatch(
      /it is not encrypted \(\d+ bytes starting with 0x7b\) but encryption is configured.*BATON_ALLOW_PLAINTEXT=true/,
    );
    expect(integrityError(() => strict.decode(compressedOnly, ctx)).message).toMatch(
      /it is a frame without encryption, but encryption is configured.*BATON_ALLOW_PLAINTEXT=true/,
    );
    integrityError(() => strict.decode(new Uint8Array(0), ctx));
  });

  it('reads them with allowPlaintext, but still only what looks like a plain record', () => {
    expect(lenient.decode(smallRecord, ctx)).toBe(smallRecord);
    expect(text(lenient.decode(compressedOnly, ctx))).toBe(text(bigRecord));
    expect(integrityError(() => lenient.decode(new Uint8Array([0x00, 0x7b]), ctx)).message).toMatch(
      /neither an encrypted frame nor a plain JSON record/,
    );
    // New data is encrypted all the same.
    expect(lenient.encode(smallRecord, ctx)[2]).toBe(FRAME_FLAG_ENCRYPTED);
  });
});

describe('key rotation', () => {
  const k1 = testKeys(['k1']);
  const k2 = testKeys(['k2']);
  const secrets = [...k1.secrets, ...k2.secrets];
  const before = createPayloadCodec({ encryption: parseKeyring(k1.spec, { purpose: 'encryption' }) });
  const rotated = createPayloadCodec({
    encryption: parseKeyring(`${k2.spec},${k1.spec}`, { purpose: 'encryption' }),
  });
  const k1Dropped = createPayloadCodec({ encryption: parseKeyring(k2.spec, { purpose: 'encryption' }) });
  const keyIdOf = (framed: Uint8Array): string => Buffer.from(framed.subarray(4, 4 + framed[3]!)).toString();

  it('reads old data with the kept key and writes new data with the active one', () => {
    const old = before.encode(smallRecord, ctx);
    expect(keyIdOf(old)).toBe('k1');
    expect(text(rotated.decode(old, ctx))).toBe(text(smallRecord));
    const fresh = rotated.encode(smallRecord, ctx);
    expect(keyIdOf(fresh)).toBe('k2');
    expect(text(k1Dropped.decode(fresh, ctx))).toBe(text(smallRecord));
  });

  it('names the dropped key when old data needs it, without showing any key', () => {
    const err = integrityError(() => k1Dropped.decode(before.encode(smallRecord, ctx), ctx));
    expect(err.message).toBe(
      'run run-1: journal record failed verification: it is encrypted with key k1, which is not in BATON_ENCRYPTION_KEYS ' +
        '(it holds k2); add key k1 back to read it: keep every key as long as data written with it exists',
    );
    expectNoLeak(err.message, secrets);
    // A missing key is its own condition (MissingKeyError): the worker leaves the run for an operator.
    expect(err).toBeInstanceOf(MissingKeyError);
    expect(err).toMatchObject({ code: 'BATON_MISSING_KEY', keyId: 'k1', purpose: 'encryption' });
  });

  it('names the key id when the key under that id is not the one that wrote the data', () => {
    const impostor = createPayloadCodec({ encryption: testKeyring('encryption', ['k1']).ring });
    const err = integrityError(() => impostor.decode(before.encode(smallRecord, ctx), ctx));
    expect(err.message).toMatch(/key k1 in BATON_ENCRYPTION_KEYS is not the key that wrote them/);
    expectNoLeak(err.message, secrets);
  });
});

describe('errors never carry key material', () => {
  it('holds for every failure mode of the codec', () => {
    const keys = testKeyring('encryption', ['k1']);
    const codec: PayloadCodec = createPayloadCodec({ encryption: keys.ring, compressThresholdBytes: 0 });
    const framed = codec.encode(bigRecord, ctx);
    const inputs = [
      smallRecord,
      framed.subarray(0, 10),
      flip(framed, 1, 1),
      flip(framed, 2, 0x40),
      flip(framed, 5, 1),
      flip(framed, 20, 1),
      flip(framed, framed.length - 1, 1),
    ];
    for (const input of inputs) {
      const err = integrityError(() => codec.decode(input, ctx));
      expectNoLeak(`${err.message}\n${err.stack ?? ''}\n${String(err.cause)}`, keys.secrets);
    }
  });
});
