/**
 * Resolves payload protection once, at start-up: option > environment variable > default > throw.
 * A typo (a short key, an active id not in the list, a threshold that is not a number) fails here,
 * with the variable's name, never on the first read of old data.
 */
import { createHmac } from 'node:crypto';
import { ConfigError } from '../../shared/errors.js';
import { createPayloadCodec, DEFAULT_COMPRESS_THRESHOLD_BYTES, type PayloadCodec } from './payload-codec.js';
import {
  keyObjectOf,
  keyringFromEnv,
  parseKeyring,
  PAYLOAD_ENV,
  type KeyPurpose,
  type Keyring,
} from './keyring.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Options of {@link resolvePayloadProtection}; each wins over its environment variable. */
export interface PayloadProtectionOptions {
  /** A keyring, or a spec like `k2:<base64>,k1:<base64>`. @defaultValue `BATON_ENCRYPTION_KEYS` */
  encryptionKeys?: Keyring | string;
  /** With a spec in `encryptionKeys`: the writing key. @defaultValue `BATON_ENCRYPTION_KEY_ID`, else the first */
  encryptionKeyId?: string;
  /** A keyring, or a spec of HMAC keys of at least 32 bytes. @defaultValue `BATON_SIGNING_KEYS` */
  signingKeys?: Keyring | string;
  /** With a spec in `signingKeys`: the signing key. @defaultValue `BATON_SIGNING_KEY_ID`, else the first */
  signingKeyId?: string;
  /**
   * Compress payloads of at least this many bytes, or `'off'`.
   * @defaultValue `BATON_COMPRESS_THRESHOLD_BYTES`, else 1024 with encryption and off without
   */
  compressThresholdBytes?: number | 'off';
  /** Read data written before protection was turned on. @defaultValue `BATON_ALLOW_PLAINTEXT`, else false */
  allowPlaintext?: boolean;
  /** Passed to the codec. @defaultValue DEFAULT_MAX_DECODED_BYTES */
  maxDecodedBytes?: number;
}

/** Everything the journal and checkpoint paths need, resolved. */
export interface PayloadProtection {
  /** Encodes journal records and sealed checkpoint entries. */
  readonly codec: PayloadCodec;
  readonly encryption: Keyring | undefined;
  readonly signing: Keyring | undefined;
  readonly compressThresholdBytes: number | undefined;
  readonly allowPlaintext: boolean;
  /** Checkpoints must be signed: signing keys are set and plaintext is not allowed. */
  readonly requireSignature: boolean;
  /** Writers link entries and checkpoints record the head: encryption or signing is on. */
  readonly hashChain: boolean;
  /** Readers refuse unlinked entries (other than lease markers): the chain is on and plaintext is not allowed. */
  readonly requireLinks: boolean;
}

/**
 * Resolves the protection from `options` and `env` (pass `process.env`); nothing set gives the
 * identity codec and no checks. Throws ConfigError naming the variable and the key id.
 */
export function resolvePayloadProtection(
  options: PayloadProtectionOptions = {},
  env: Env = {},
): PayloadProtection {
  const encryption = resolveKeyring(options.encryptionKeys, options.encryptionKeyId, 'encryption', env);
  const signing = resolveKeyring(options.signingKeys, options.signingKeyId, 'signing', env);
  if (encryption !== undefined && signing !== undefined) rejectSharedKeys(encryption, signing);
  const threshold = options.compressThresholdBytes ?? readThreshold(env);
  const compressThresholdBytes =
    threshold === 'off'
      ? undefined
      : (threshold ?? (encryption !== undefined ? DEFAULT_COMPRESS_THRESHOLD_BYTES : undefined));
  if (
    compressThresholdBytes !== undefined &&
    !(Number.isSafeInteger(compressThresholdBytes) && compressThresholdBytes >= 0)
  ) {
    throw new ConfigError(
      `compressThresholdBytes is ${compressThresholdBytes}; use a whole number >= 0 or 'off'`,
    );
  }
  const allowPlaintext = options.allowPlaintext ?? readBoolean(env, PAYLOAD_ENV.allowPlaintext) ?? false;
  const hashChain = encryption !== undefined || signing !== undefined;
  return {
    codec: createPayloadCodec({
      encryption,
      compressThresholdBytes,
      allowPlaintext,
      maxDecodedBytes: options.maxDecodedBytes,
    }),
    encryption,
    signing,
    compressThresholdBytes,
    allowPlaintext,
    requireSignature: signing !== undefined && !allowPlaintext,
    hashChain,
    requireLinks: hashChain && !allowPlaintext,
  };
}

/** One line for the start-up log: key ids and settings, never key material. */
/** True when protection changes anything: otherwise records and checkpoints take the plain path. */
export function protectionActive(protection: PayloadProtection): boolean {
  return !protection.codec.identity || protection.signing !== undefined || protection.hashChain;
}

export function describePayloadProtection(protection: PayloadProtection): string {
  const { encryption, signing, compressThresholdBytes } = protection;
  const parts = [
    encryption === undefined
      ? 'encryption off'
      : `encryption AES-256-GCM with key ${encryption.activeId} (reads ${encryption.ids.join(', ')})`,
    signing === undefined
      ? 'checkpoint signing off'
      : `checkpoint signing HMAC-SHA256 with key ${signing.activeId} (verifies ${signing.ids.join(', ')})`,
    compressThresholdBytes === undefined
      ? 'compression off'
      : `compression from ${compressThresholdBytes} bytes`,
    protection.hashChain ? 'hash chain on' : 'hash chain off',
  ];
  if (protection.allowPlaintext) parts.push(`${PAYLOAD_ENV.allowPlaintext}: unprotected data is still read`);
  return parts.join('; ');
}

/** What a fingerprint is derived with: a constant, so equal keys give equal fingerprints anywhere. */
const FINGERPRINT_LABEL = 'baton key fingerprint v1';

/**
 * A short fingerprint of every configured key, by purpose and id: the first 12 hex digits of
 * HMAC-SHA256(key, a fixed label). It tells whether two workers hold the same material under an id
 * (the same id with different material fails every read of the other's data) and reveals nothing
 * usable about the key. The worker logs it at start-up; compare it across pods.
 */
export function payloadKeyFingerprints(protection: PayloadProtection): {
  encryption: Record<string, string>;
  signing: Record<string, string>;
} {
  const of = (ring: Keyring | undefined): Record<string, string> =>
    Object.fromEntries(
      (ring?.ids ?? []).map((id) => [
        id,
        createHmac('sha256', keyObjectOf(ring!.get(id)!))
          .update(FINGERPRINT_LABEL)
          .digest('hex')
          .slice(0, 12),
      ]),
    );
  return { encryption: of(protection.encryption), signing: of(protection.signing) };
}

function resolveKeyring(
  given: Keyring | string | undefined,
  activeId: string | undefined,
  purpose: KeyPurpose,
  env: Env,
): Keyring | undefined {
  if (given === undefined) return keyringFromEnv(env, purpose);
  if (typeof given !== 'string') {
    if (given.purpose !== purpose) {
      throw new ConfigError(
        `the ${purpose} keyring option holds ${given.purpose} keys (from ${given.source})`,
      );
    }
    return given;
  }
  const name = purpose === 'encryption' ? 'encryptionKeys' : 'signingKeys';
  return parseKeyring(given, {
    purpose,
    activeId,
    source: `the ${name} option`,
    activeSource: `the ${name === 'encryptionKeys' ? 'encryptionKeyId' : 'signingKeyId'} option`,
  });
}

/** One secret for two algorithms invites trouble; a copy-paste slip is caught here. */
function rejectSharedKeys(encryption: Keyring, signing: Keyring): void {
  for (const encId of encryption.ids) {
    for (const signId of signing.ids) {
      if (keyObjectOf(encryption.get(encId)!).equals(keyObjectOf(signing.get(signId)!))) {
        throw new ConfigError(
          `key ${signId} of ${signing.source} has the same bytes as key ${encId} of ${encryption.source}; ` +
            'generate a separate signing key',
        );
      }
    }
  }
}

function readThreshold(env: Env): number | 'off' | undefined {
  const name = PAYLOAD_ENV.compressThresholdBytes;
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (raw.toLowerCase() === 'off') return 'off';
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new ConfigError(
      `${name} is '${raw}'; use a whole number of bytes (0 compresses everything) or 'off'`,
    );
  }
  return Number(raw);
}

function readBoolean(env: Env, name: string): boolean | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} is '${env[name]}'; use true or false`);
}
