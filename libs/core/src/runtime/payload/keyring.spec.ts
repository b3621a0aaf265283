import { randomBytes } from 'node:crypto';
import { format, inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import { keyringFromEnv, parseKeyring } from './keyring.js';
import { expectNoLeak, testKeys } from './test-keys.spec-helper.js';

const b64 = (bytes: number): string => randomBytes(bytes).toString('base64');

/** The ConfigError `fn` throws, after checking it names nothing secret. */
function configError(fn: () => unknown, secrets: readonly string[]): ConfigError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  const err = caught as ConfigError;
  expect(err.code).toBe('BATON_CONFIG');
  expectNoLeak(`${err.message} ${err.stack ?? ''} ${inspect(err)}`, secrets);
  return err;
}

describe('parseKeyring', () => {
  it('reads id:base64 entries in order; the first is active unless one is named', () => {
    const { spec } = testKeys(['k2', 'k1']);
    const ring = parseKeyring(spec, { purpose: 'encryption' });
    expect(ring.ids).toEqual(['k2', 'k1']);
    expect(ring.activeId).toBe('k2');
    expect(ring.active.id).toBe('k2');
    expect(ring.source).toBe('BATON_ENCRYPTION_KEYS');
    expect(parseKeyring(spec, { purpose: 'encryption', activeId: 'k1' }).active.id).toBe('k1');
    expect(ring.get('k1')?.id).toBe('k1');
    expect(ring.get('k3')).toBeUndefined();
  });

  it('accepts white space and new lines between entries, and base64url without padding', () => {
    const key = randomBytes(32);
    const ring = parseKeyring(` a:${key.toString('base64')}\n  b:${key.toString('base64url')} ,`, {
      purpose: 'encryption',
    });
    expect(ring.ids).toEqual(['a', 'b']);
  });

  it('names the variable and key id of a key that is not base64, without showing it', () => {
    const bad = `${b64(30)}!!`;
    const err = configError(() => parseKeyring(`k1:${b64(32)},k2:${bad}`, { purpose: 'encryption' }), [bad]);
    expect(err.message).toMatch(
      /^BATON_ENCRYPTION_KEYS: key k2 is not valid base64; generate one with: node -e/,
    );
  });

  it('names the key id and the length of a key of the wrong size', () => {
    const short = b64(16);
    const err = configError(() => parseKeyring(`k1:${short}`, { purpose: 'encryption' }), [short]);
    expect(err.message).toMatch(/key k1 is 16 bytes; AES-256-GCM needs exactly 32/);
    const long = b64(33);
    expect(configError(() => parseKeyring(`k1:${long}`, { purpose: 'encryption' }), [long]).message).toMatch(
      /key k1 is 33 bytes/,
    );
  });

  it('refuses signing keys below 32 bytes and accepts longer ones', () => {
    const short = b64(31);
    const err = configError(() => parseKeyring(`s1:${short}`, { purpose: 'signing' }), [short]);
    expect(err.message).toMatch(
      /^BATON_SIGNING_KEYS: key s1 is 31 bytes; an HMAC-SHA256 signing key needs at least 32/,
    );
    expect(parseKeyring(`s1:${b64(64)}`, { purpose: 'signing' }).ids).toEqual(['s1']);
  });

  it('refuses a duplicate key id', () => {
    const { spec, secrets } = testKeys(['k1', 'k1']);
    expect(configError(() => parseKeyring(spec, { purpose: 'encryption' }), secrets).message).toMatch(
      /key id k1 is listed twice/,
    );
  });

  it('does not echo an entry without a valid id: it may be a bare key', () => {
    const bare = b64(32);
    const err = configError(() => parseKeyring(`k1:${b64(32)},${bare}`, { purpose: 'encryption' }), [bare]);
    expect(err.message).toMatch(/entry 2 does not start with a valid key id.*not shown/);
    // Written the wrong way round (key:id): the "id" is the key and must not be echoed either.
    const swapped = b64(32);
    configError(() => parseKeyring(`${swapped}:k1`, { purpose: 'encryption' }), [swapped]);
  });

  it('names the active id variable when the active id is not listed', () => {
    const { spec, secrets } = testKeys(['k2', 'k1']);
    const err = configError(() => parseKeyring(spec, { purpose: 'encryption', activeId: 'k3' }), secrets);
    expect(err.message).toBe(
      "BATON_ENCRYPTION_KEY_ID is 'k3' but BATON_ENCRYPTION_KEYS holds only k2, k1; name one of them, or add the key to BATON_ENCRYPTION_KEYS",
    );
    // Someone pasted a key into the id variable: it is not shown.
    const pasted = b64(32);
    const second = configError(
      () => parseKeyring(spec, { purpose: 'encryption', activeId: pasted }),
      [pasted],
    );
    expect(second.message).toMatch(/^BATON_ENCRYPTION_KEY_ID is not a valid key id/);
  });

  it('refuses a list without keys', () => {
    expect(configError(() => parseKeyring(' , ', { purpose: 'signing' }), []).message).toMatch(
      /BATON_SIGNING_KEYS lists no key/,
    );
  });
});

describe('key redaction', () => {
  const { spec, secrets } = testKeys(['k2', 'k1']);
  const ring = parseKeyring(spec, { purpose: 'encryption' });

  it('prints a keyring and its keys as ids only, however they are printed', () => {
    const shown = [
      JSON.stringify(ring),
      JSON.stringify({ nested: { ring, key: ring.active } }),
      JSON.stringify(ring.active),
      inspect(ring, { showHidden: true, depth: Infinity }),
      inspect(ring.active, { showHidden: true, depth: Infinity }),
      inspect({ ring, key: ring.get('k1') }, { showHidden: true, depth: Infinity, customInspect: false }),
      inspect(ring, { showHidden: true, depth: Infinity, customInspect: false }),
      format('%o %O %s %j', ring, ring.active, ring, ring),
      String(ring),
      `${ring.active}`,
    ];
    for (const text of shown) expectNoLeak(text, secrets);
    expect(JSON.stringify(ring.active)).toBe('"[redacted key k2]"');
    expect(inspect(ring.active)).toBe('[redacted key k2]');
    expect(JSON.parse(JSON.stringify(ring))).toEqual({
      purpose: 'encryption',
      source: 'BATON_ENCRYPTION_KEYS',
      activeId: 'k2',
      ids: ['k2', 'k1'],
    });
  });

  it('keeps no key material in enumerable properties', () => {
    expect(Object.keys(ring.active).sort()).toEqual(['id', 'purpose']);
    expectNoLeak(JSON.stringify(Object.entries(ring)), secrets);
  });
});

describe('keyringFromEnv', () => {
  it('is undefined when the key list is unset or blank', () => {
    expect(keyringFromEnv({}, 'encryption')).toBeUndefined();
    expect(keyringFromEnv({ BATON_ENCRYPTION_KEYS: '  ' }, 'encryption')).toBeUndefined();
  });

  it('reads each purpose from its own variables', () => {
    const enc = testKeys(['k2', 'k1']);
    const sig = testKeys(['s1']);
    const env = {
      BATON_ENCRYPTION_KEYS: enc.spec,
      BATON_ENCRYPTION_KEY_ID: 'k1',
      BATON_SIGNING_KEYS: sig.spec,
    };
    expect(keyringFromEnv(env, 'encryption')?.activeId).toBe('k1');
    expect(keyringFromEnv(env, 'signing')?.ids).toEqual(['s1']);
  });

  it('refuses an active id without keys', () => {
    expect(() => keyringFromEnv({ BATON_SIGNING_KEY_ID: 's1' }, 'signing')).toThrow(
      'BATON_SIGNING_KEY_ID is set but BATON_SIGNING_KEYS is not; set the keys, or unset both',
    );
  });
});
