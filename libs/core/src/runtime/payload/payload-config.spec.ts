import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { parseKeyring } from './keyring.js';
import {
  describePayloadProtection,
  payloadKeyFingerprints,
  resolvePayloadProtection,
} from './payload-config.js';
import { expectNoLeak, testKeys } from './test-keys.spec-helper.js';

const enc = testKeys(['k2', 'k1']);
const sig = testKeys(['s1']);

describe('resolvePayloadProtection', () => {
  it('is the identity with nothing configured', () => {
    const p = resolvePayloadProtection({}, {});
    expect(p.codec.identity).toBe(true);
    expect([p.encryption, p.signing, p.compressThresholdBytes]).toEqual([undefined, undefined, undefined]);
    expect([p.hashChain, p.requireLinks, p.requireSignature, p.allowPlaintext]).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(describePayloadProtection(p)).toBe(
      'encryption off; checkpoint signing off; compression off; hash chain off',
    );
  });

  it('reads the environment: keys, active ids, and compression from 1024 bytes under encryption', () => {
    const p = resolvePayloadProtection(
      {},
      { BATON_ENCRYPTION_KEYS: enc.spec, BATON_ENCRYPTION_KEY_ID: 'k1', BATON_SIGNING_KEYS: sig.spec },
    );
    expect(p.encryption?.activeId).toBe('k1');
    expect(p.signing?.activeId).toBe('s1');
    expect(p.compressThresholdBytes).toBe(1024);
    expect([p.hashChain, p.requireLinks, p.requireSignature]).toEqual([true, true, true]);
    const line = describePayloadProtection(p);
    expect(line).toBe(
      'encryption AES-256-GCM with key k1 (reads k2, k1); checkpoint signing HMAC-SHA256 with key s1 (verifies s1); ' +
        'compression from 1024 bytes; hash chain on',
    );
    expectNoLeak(`${line} ${JSON.stringify(p)}`, [...enc.secrets, ...sig.secrets]);
  });

  it('lets options win over the environment', () => {
    const other = testKeys(['o1']);
    const p = resolvePayloadProtection(
      { encryptionKeys: other.spec, compressThresholdBytes: 'off', allowPlaintext: false },
      {
        BATON_ENCRYPTION_KEYS: enc.spec,
        BATON_COMPRESS_THRESHOLD_BYTES: '10',
        BATON_ALLOW_PLAINTEXT: 'true',
      },
    );
    expect(p.encryption?.ids).toEqual(['o1']);
    expect(p.encryption?.source).toBe('the encryptionKeys option');
    expect(p.compressThresholdBytes).toBeUndefined();
    expect(p.allowPlaintext).toBe(false);
    const ring = parseKeyring(sig.spec, { purpose: 'signing' });
    expect(resolvePayloadProtection({ signingKeys: ring }).signing).toBe(ring);
  });

  it('turns compression on alone, or off under encryption, from BATON_COMPRESS_THRESHOLD_BYTES', () => {
    const alone = resolvePayloadProtection({}, { BATON_COMPRESS_THRESHOLD_BYTES: '2048' });
    expect(alone.compressThresholdBytes).toBe(2048);
    expect(alone.codec.identity).toBe(false);
    expect(alone.hashChain).toBe(false);
    const off = resolvePayloadProtection(
      {},
      { BATON_ENCRYPTION_KEYS: enc.spec, BATON_COMPRESS_THRESHOLD_BYTES: 'off' },
    );
    expect(off.compressThresholdBytes).toBeUndefined();
  });

  it('relaxes the checks under BATON_ALLOW_PLAINTEXT', () => {
    const p = resolvePayloadProtection(
      {},
      { BATON_ENCRYPTION_KEYS: enc.spec, BATON_SIGNING_KEYS: sig.spec, BATON_ALLOW_PLAINTEXT: '1' },
    );
    expect([p.hashChain, p.requireLinks, p.requireSignature, p.allowPlaintext]).toEqual([
      true,
      false,
      false,
      true,
    ]);
    expect(describePayloadProtection(p)).toMatch(/BATON_ALLOW_PLAINTEXT: unprotected data is still read$/);
  });

  it('names the variable of every malformed setting', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { BATON_COMPRESS_THRESHOLD_BYTES: '1k' },
        /^BATON_COMPRESS_THRESHOLD_BYTES is '1k'; use a whole number of bytes/,
      ],
      [{ BATON_ALLOW_PLAINTEXT: 'yes please' }, /^BATON_ALLOW_PLAINTEXT is 'yes please'; use true or false$/],
      [
        { BATON_ENCRYPTION_KEYS: 'k1:short' },
        /^BATON_ENCRYPTION_KEYS: key k1 is 3 bytes; AES-256-GCM needs exactly 32/,
      ],
      [
        { BATON_SIGNING_KEYS: sig.spec, BATON_SIGNING_KEY_ID: 's9' },
        /^BATON_SIGNING_KEY_ID is 's9' but BATON_SIGNING_KEYS holds only s1/,
      ],
    ];
    for (const [env, message] of cases) {
      expect(() => resolvePayloadProtection({}, env)).toThrow(ConfigError);
      expect(() => resolvePayloadProtection({}, env)).toThrow(message);
    }
    expect(() => resolvePayloadProtection({ compressThresholdBytes: -1 })).toThrow(ConfigError);
    expect(() =>
      resolvePayloadProtection({ encryptionKeys: parseKeyring(sig.spec, { purpose: 'signing' }) }),
    ).toThrow(/the encryption keyring option holds signing keys/);
  });

  it('refuses the same bytes as an encryption and a signing key, naming both ids only', () => {
    const shared = `s1:${enc.secrets[1]}`;
    let caught: unknown;
    try {
      resolvePayloadProtection({}, { BATON_ENCRYPTION_KEYS: enc.spec, BATON_SIGNING_KEYS: shared });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const message = (caught as Error).message;
    expect(message).toBe(
      'key s1 of BATON_SIGNING_KEYS has the same bytes as key k1 of BATON_ENCRYPTION_KEYS; generate a separate signing key',
    );
    expectNoLeak(message, enc.secrets);
  });

  it('fingerprints each key: equal material gives equal prints, other material under the same id does not, no key shows', () => {
    const a = testKeys(['k1', 'k2']);
    const b = testKeys(['k1']);
    const s1 = testKeys(['s1']);
    const first = resolvePayloadProtection({ encryptionKeys: a.spec, signingKeys: s1.spec }, {});
    const again = resolvePayloadProtection({ encryptionKeys: a.spec }, {});
    const other = resolvePayloadProtection({ encryptionKeys: b.spec }, {});
    const prints = payloadKeyFingerprints(first);
    expect(Object.keys(prints.encryption)).toEqual(['k1', 'k2']);
    expect(prints.encryption.k1).toMatch(/^[0-9a-f]{12}$/);
    expect(prints.encryption.k1).not.toBe(prints.encryption.k2);
    expect(payloadKeyFingerprints(again).encryption.k1).toBe(prints.encryption.k1);
    expect(payloadKeyFingerprints(other).encryption.k1).not.toBe(prints.encryption.k1);
    expect(Object.keys(prints.signing)).toEqual(['s1']);
    expect(payloadKeyFingerprints(resolvePayloadProtection({}, {}))).toEqual({ encryption: {}, signing: {} });
    expectNoLeak(JSON.stringify(prints), [...a.secrets, ...s1.secrets]);
  });
});
