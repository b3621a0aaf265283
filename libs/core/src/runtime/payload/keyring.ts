/**
 * Keyrings: named secret keys read from configuration, one active key that writes and every
 * listed key able to read, so a key can rotate without losing data written under the old one.
 *
 * Invariants:
 * 1. Key material never reaches a message, a log line or a serialisation: errors name the
 *    variable and the key id only, and a key object prints and serialises as `[redacted key id]`.
 * 2. A key id is at most 32 characters, so a 32-byte key in base64 (43+ characters) can never be
 *    taken for an id and echoed in an error (say, when someone writes `key:id` the wrong way round).
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import { ConfigError } from '../../shared/errors.js';

/** Names of the environment variables that configure payload protection. */
export const PAYLOAD_ENV = {
  encryptionKeys: 'BATON_ENCRYPTION_KEYS',
  encryptionKeyId: 'BATON_ENCRYPTION_KEY_ID',
  signingKeys: 'BATON_SIGNING_KEYS',
  signingKeyId: 'BATON_SIGNING_KEY_ID',
  compressThresholdBytes: 'BATON_COMPRESS_THRESHOLD_BYTES',
  allowPlaintext: 'BATON_ALLOW_PLAINTEXT',
} as const;

/** What a keyring's keys are for: AES-256-GCM payload encryption or HMAC-SHA256 checkpoint signing. */
export type KeyPurpose = 'encryption' | 'signing';

/** Key ids: 1-32 letters, digits, '.', '_' or '-', starting with a letter or digit. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;
/** AES-256 takes exactly 32 bytes of key. */
export const ENCRYPTION_KEY_BYTES = 32;
/** An HMAC-SHA256 key shorter than the digest weakens it; 32 bytes is the floor. */
export const MIN_SIGNING_KEY_BYTES = 32;

const GENERATE_HINT = `generate one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64'))"`;
const INSPECT = Symbol.for('nodejs.util.inspect.custom');
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** The crypto handles, reachable only through {@link keyObjectOf} (not exported by the package). */
const material = new WeakMap<SecretKey, KeyObject>();

/** One named key. Prints and serialises as `[redacted key <id>]`; its bytes are not reachable from it. */
export class SecretKey {
  constructor(
    readonly id: string,
    readonly purpose: KeyPurpose,
    bytes: Uint8Array,
  ) {
    material.set(this, createSecretKey(bytes));
  }

  toJSON(): string {
    return this.toString();
  }

  toString(): string {
    return `[redacted key ${this.id}]`;
  }

  [INSPECT](): string {
    return this.toString();
  }
}

/** The node:crypto handle of a key, for the codec and the signer of this package only. */
export function keyObjectOf(key: SecretKey): KeyObject {
  const handle = material.get(key);
  if (handle === undefined) throw new TypeError(`key ${key.id} was not created by a Keyring`);
  return handle;
}

/** Keys by id, with the active one (the one new data is written with). */
export class Keyring {
  readonly #keys: ReadonlyMap<string, SecretKey>;

  constructor(
    readonly purpose: KeyPurpose,
    keys: readonly SecretKey[],
    /** The id new data is written with. */
    readonly activeId: string,
    /** Where the keys came from (a variable or option name), quoted by errors. */
    readonly source: string,
  ) {
    this.#keys = new Map(keys.map((key) => [key.id, key]));
    if (!this.#keys.has(activeId)) throw new TypeError(`active key ${activeId} is not in the keyring`);
  }

  /** The key that writes. */
  get active(): SecretKey {
    return this.#keys.get(this.activeId)!;
  }

  /** Every id in the ring, in the order they were listed. */
  get ids(): string[] {
    return [...this.#keys.keys()];
  }

  /** The key with this id, or undefined when it is not in the ring. */
  get(id: string): SecretKey | undefined {
    return this.#keys.get(id);
  }

  toJSON(): { purpose: KeyPurpose; source: string; activeId: string; ids: string[] } {
    return { purpose: this.purpose, source: this.source, activeId: this.activeId, ids: this.ids };
  }

  toString(): string {
    return `Keyring(${this.purpose} from ${this.source}: active ${this.activeId}; ids ${this.ids.join(', ')})`;
  }

  [INSPECT](): string {
    return this.toString();
  }
}

/** Options of {@link parseKeyring}. */
export interface ParseKeyringOptions {
  purpose: KeyPurpose;
  /**
   * The id of the key that writes.
   * @defaultValue the first key listed
   */
  activeId?: string;
  /**
   * The name errors give the key list.
   * @defaultValue `BATON_ENCRYPTION_KEYS` or `BATON_SIGNING_KEYS`, after the purpose
   */
  source?: string;
  /**
   * The name errors give the active id.
   * @defaultValue `BATON_ENCRYPTION_KEY_ID` or `BATON_SIGNING_KEY_ID`, after the purpose
   */
  activeSource?: string;
}

/**
 * Parses `id:base64key` entries separated by commas or white space, e.g. `k2:…,k1:…`.
 * Throws a ConfigError naming the variable, the entry number or key id and what is wrong; never
 * the key material, and never an entry that does not even have a valid id (it may be a bare key).
 */
export function parseKeyring(spec: string, options: ParseKeyringOptions): Keyring {
  const { purpose } = options;
  const source = options.source ?? defaultSource(purpose).keys;
  const activeSource = options.activeSource ?? defaultSource(purpose).activeId;
  const entries = spec.split(/[\s,]+/).filter((entry) => entry.length > 0);
  if (entries.length === 0) {
    throw new ConfigError(`${source} lists no key; give id:base64key entries separated by commas`);
  }
  const keys: SecretKey[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon);
    if (!KEY_ID_PATTERN.test(id)) {
      throw new ConfigError(
        `${source}: entry ${index + 1} does not start with a valid key id and ':' (an id is 1-32 letters, ` +
          `digits, '.', '_' or '-'); the entry is not shown since it may hold key material`,
      );
    }
    if (seen.has(id)) {
      throw new ConfigError(`${source}: key id ${id} is listed twice; give each key its own id`);
    }
    seen.add(id);
    const bytes = decodeKey(entry.slice(colon + 1), id, purpose, source);
    keys.push(new SecretKey(id, purpose, bytes));
    bytes.fill(0); // the KeyObject holds its own copy; leave no stray one in the heap
  });
  const activeId = options.activeId?.trim() || keys[0]!.id;
  if (!seen.has(activeId)) {
    // An id that fits the pattern is at most 32 characters, so it cannot be a key: safe to show.
    const shown = KEY_ID_PATTERN.test(activeId) ? `is '${activeId}'` : 'is not a valid key id';
    throw new ConfigError(
      `${activeSource} ${shown} but ${source} holds only ${[...seen].join(', ')}; ` +
        `name one of them, or add the key to ${source}`,
    );
  }
  return new Keyring(purpose, keys, activeId, source);
}

function decodeKey(text: string, id: string, purpose: KeyPurpose, source: string): Uint8Array {
  const padded = text.endsWith('=');
  if (!BASE64.test(text) || (padded && text.length % 4 !== 0)) {
    throw new ConfigError(`${source}: key ${id} is not valid base64; ${GENERATE_HINT}`);
  }
  const bytes = Buffer.from(text, 'base64');
  if (purpose === 'encryption' && bytes.length !== ENCRYPTION_KEY_BYTES) {
    throw new ConfigError(
      `${source}: key ${id} is ${bytes.length} bytes; AES-256-GCM needs exactly ${ENCRYPTION_KEY_BYTES}; ${GENERATE_HINT}`,
    );
  }
  if (purpose === 'signing' && bytes.length < MIN_SIGNING_KEY_BYTES) {
    throw new ConfigError(
      `${source}: key ${id} is ${bytes.length} bytes; an HMAC-SHA256 signing key needs at least ${MIN_SIGNING_KEY_BYTES}; ${GENERATE_HINT}`,
    );
  }
  return bytes;
}

function defaultSource(purpose: KeyPurpose): { keys: string; activeId: string } {
  return purpose === 'encryption'
    ? { keys: PAYLOAD_ENV.encryptionKeys, activeId: PAYLOAD_ENV.encryptionKeyId }
    : { keys: PAYLOAD_ENV.signingKeys, activeId: PAYLOAD_ENV.signingKeyId };
}

/**
 * The keyring of one purpose configured in `env`, or undefined when its key list is unset or
 * empty. Setting the active id without the key list is a ConfigError, since it shows intent.
 */
export function keyringFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  purpose: KeyPurpose,
): Keyring | undefined {
  const names = defaultSource(purpose);
  const spec = env[names.keys]?.trim();
  const activeId = env[names.activeId]?.trim() || undefined;
  if (!spec) {
    if (activeId !== undefined) {
      throw new ConfigError(`${names.activeId} is set but ${names.keys} is not; set the keys, or unset both`);
    }
    return undefined;
  }
  return parseKeyring(spec, { purpose, activeId });
}
