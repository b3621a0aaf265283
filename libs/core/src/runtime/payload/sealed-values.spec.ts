import { describe, expect, it } from 'vitest';
import { CONTINUED_AS } from '../../author/continue-as-new.js';
import { CheckpointIntegrityError } from '../../adapter/errors.js';
import { MissingKeyError } from '../errors.js';
import { resolvePayloadProtection } from './payload-config.js';
import {
  isSealedError,
  isSealedValue,
  openError,
  openResult,
  openValue,
  protectedLabel,
  SEALED_VALUE_FIELD,
  sealError,
  sealOutcome,
  sealValue,
  type SealedValue,
} from './sealed-values.js';
import { expectNoLeak, testKeys } from './test-keys.spec-helper.js';

const k1 = testKeys(['k1']);
const k2 = testKeys(['k2']);
const withK1 = resolvePayloadProtection({ encryptionKeys: k1.spec }, {});
const withK2 = resolvePayloadProtection({ encryptionKeys: k2.spec }, {});
const withBoth = resolvePayloadProtection({ encryptionKeys: `${k2.spec},${k1.spec}` }, {});
const compressionOnly = resolvePayloadProtection({ compressThresholdBytes: 0 }, {});
const SECRET = { card: '4111-1111-1111-1111', note: 'x'.repeat(2_000) };

describe('sealed values', () => {
  it('seals a value for its run and purpose, and opens it back with the key it names', () => {
    const sealed = sealValue(SECRET, 'run-1', 'run input', withK1);
    expect(isSealedValue(sealed)).toBe(true);
    expect(sealed).toMatchObject({ [SEALED_VALUE_FIELD]: 1, key: 'k1' });
    expect(JSON.stringify(sealed)).not.toContain('4111');
    expectNoLeak(JSON.stringify(sealed), k1.secrets);
    expect(openValue(sealed, 'run-1', 'run input', withK1)).toEqual(SECRET);
    // A reader that holds k1 among others opens it too (a rotation).
    expect(openValue(sealed, 'run-1', 'run input', withBoth)).toEqual(SECRET);
    expect(protectedLabel(sealed as SealedValue)).toBe('protected (key k1)');
  });

  it('refuses a frame moved to another run or purpose, and names a key the reader lacks', () => {
    const sealed = sealValue(SECRET, 'run-1', 'run input', withK1);
    expect(() => openValue(sealed, 'run-2', 'run input', withK1)).toThrow(CheckpointIntegrityError);
    expect(() => openValue(sealed, 'run-1', 'run result', withK1)).toThrow(
      /authentication with key k1 failed/,
    );
    const missing = (() => {
      try {
        openValue(sealed, 'run-1', 'run input', withK2);
      } catch (err) {
        return err;
      }
    })();
    expect(missing).toBeInstanceOf(MissingKeyError);
    expect(missing).toMatchObject({ keyId: 'k1', runId: 'run-1' });
    // With no protection at all, the error still names the key.
    expect(() => openValue(sealed, 'run-1', 'run input', undefined)).toThrow(
      /encrypted with key k1 but no encryption key is configured/,
    );
    const altered = {
      ...(sealed as SealedValue),
      frame: `${(sealed as SealedValue).frame.slice(0, -4)}AAAA`,
    };
    expect(() => openValue(altered, 'run-1', 'run input', withK1)).toThrow(/failed verification/);
  });

  it('leaves values as they are without an encryption key, and never seals null, undefined or a sealed value', () => {
    expect(sealValue(SECRET, 'run-1', 'run input', undefined)).toBe(SECRET);
    expect(sealValue(SECRET, 'run-1', 'run input', compressionOnly)).toBe(SECRET);
    expect(sealValue(null, 'run-1', 'run input', withK1)).toBeNull();
    expect(sealValue(undefined, 'run-1', 'run input', withK1)).toBeUndefined();
    const sealed = sealValue(SECRET, 'run-1', 'run input', withK1);
    expect(sealValue(sealed, 'run-1', 'run input', withK2)).toBe(sealed);
    // A plain value (a record from before sealing) is read as it is.
    expect(openValue(SECRET, 'run-1', 'run input', withK1)).toBe(SECRET);
  });

  it('seals an error with its name, code and retryable flag in the clear', () => {
    const error = {
      name: 'PaymentDeclined',
      message: 'card 4111 declined',
      code: 'E_CARD',
      retryable: false,
      stack: 'at x',
    };
    const sealed = sealError(error, 'run-1', withK1)!;
    expect(isSealedError(sealed)).toBe(true);
    expect(sealed).toMatchObject({
      name: 'PaymentDeclined',
      code: 'E_CARD',
      retryable: false,
      message: 'protected (key k1)',
    });
    expect(JSON.stringify(sealed)).not.toContain('4111');
    expect(sealed).not.toHaveProperty('stack');
    expect(openError(sealed, 'run-1', withK1)).toEqual(error);
    expect(openError(error, 'run-1', withK1)).toBe(error);
    expect(sealError(error, 'run-1', undefined)).toBe(error);
  });

  it('seals an outcome, keeping a continued run successor readable and its input sealed for the successor', () => {
    const completed = sealOutcome({ status: 'completed', result: SECRET }, 'run-1', withK1);
    expect(completed.status === 'completed' && isSealedValue(completed.result)).toBe(true);
    expect(openResult((completed as { result: unknown }).result, 'run-1', withK1)).toEqual(SECRET);

    const next = { runId: 'run-2', workflow: 'w', version: 1, input: SECRET };
    const continued = sealOutcome({ status: 'completed', result: { [CONTINUED_AS]: next } }, 'run-1', withK1);
    const stored = (continued as { result: Record<string, typeof next> }).result[CONTINUED_AS]!;
    expect(stored).toMatchObject({ runId: 'run-2', workflow: 'w', version: 1 });
    expect(isSealedValue(stored.input)).toBe(true);
    expect(openValue(stored.input, 'run-2', 'run input', withK1)).toEqual(SECRET);
    expect(openResult((continued as { result: unknown }).result, 'run-1', withK1)).toEqual({
      [CONTINUED_AS]: next,
    });

    const failed = sealOutcome(
      { status: 'failed', error: { name: 'E', message: 'secret' } },
      'run-1',
      withK1,
    );
    expect(failed).toMatchObject({ status: 'failed', error: { name: 'E', message: 'protected (key k1)' } });
    const plain = { status: 'completed', result: SECRET } as const;
    expect(sealOutcome(plain, 'run-1', undefined)).toBe(plain);
  });
});
