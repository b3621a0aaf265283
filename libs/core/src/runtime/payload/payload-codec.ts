/**
 * The payload codec: compresses and encrypts the bytes of a journal record or a sealed checkpoint,
 * and checks them on the way back. With nothing configured it is the identity (the same
 * Uint8Array goes in and out, nothing is allocated), so the hot path costs one byte comparison.
 *
 * Frame layout (all integers unsigned, big-endian):
 *
 *   0      magic 0xBA (a UTF-8 continuation byte: no JSON text starts with it; plain records
 *          always start with '{' 0x7B)
 *   1      format version, 1
 *   2      flags: 0x01 zlib-compressed (RFC 1950), 0x02 AES-256-GCM encrypted; others must be 0
 *   3      key id length n (0 when not encrypted)
 *   4      key id, n ASCII bytes
 *   4+n    encrypted: IV (12 bytes), ciphertext, auth tag (16 bytes)
 *          not encrypted: the zlib stream
 *
 * The AAD of the encryption is the header (bytes 0 to 4+n) followed by the run id and the
 * payload's purpose (`what`), each prefixed by its UTF-8 length as 4 bytes: a frame moved to
 * another run, used for another purpose, or with a flipped flag or key id fails authentication.
 *
 * Invariants:
 * 1. Every failure to read a frame is a CheckpointIntegrityError naming the run and the payload,
 *    with what the operator can do; none is retryable, since the same bytes fail the same way.
 * 2. Under encryption, unencrypted bytes are refused unless `allowPlaintext` (the migration
 *    switch), and even then only bytes that start like a plain JSON record ('{').
 */
import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto';
import { deflateSync, inflateSync } from 'node:zlib';
import { CheckpointIntegrityError } from '../../adapter/errors.js';
import { MissingKeyError, PlaintextRefusedError } from '../errors.js';
import { KEY_ID_PATTERN, keyObjectOf, PAYLOAD_ENV, type Keyring } from './keyring.js';

/** First byte of every frame. */
export const FRAME_MAGIC = 0xba;
/** The frame format this version writes and reads. */
export const FRAME_VERSION = 1;
/** Flag: the body is a zlib stream. */
export const FRAME_FLAG_COMPRESSED = 0x01;
/** Flag: the body is AES-256-GCM ciphertext (IV first, tag last). */
export const FRAME_FLAG_ENCRYPTED = 0x02;
/** Payloads at least this long are compressed when compression is on and no threshold is given. */
export const DEFAULT_COMPRESS_THRESHOLD_BYTES = 1024;
/** The most a frame may decompress to; above it the frame is refused (a zip bomb, or a bug). */
export const DEFAULT_MAX_DECODED_BYTES = 64 * 1024 * 1024;

const KNOWN_FLAGS = FRAME_FLAG_COMPRESSED | FRAME_FLAG_ENCRYPTED;
const FIXED_HEADER_BYTES = 4;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const JSON_OPEN_BRACE = 0x7b;
const CIPHER = 'aes-256-gcm';

/** Names a payload: bound into the encryption (run and purpose) and quoted by errors. */
export interface PayloadContext {
  /** The run the payload belongs to; authenticated, so a frame cannot move to another run. */
  runId: string;
  /** The payload's purpose, e.g. {@link JOURNAL_RECORD}; authenticated. Keep it stable across writers. */
  what: string;
  /**
   * How errors name the payload, e.g. `journal record at position 17`; not authenticated.
   * @defaultValue `what`
   */
  label?: string;
}

/** Turns plain bytes into stored bytes and back. */
export interface PayloadCodec {
  /** True when encode returns its input: nothing is configured. */
  readonly identity: boolean;
  encode(plain: Uint8Array, ctx: PayloadContext): Uint8Array;
  /** Throws CheckpointIntegrityError when the bytes are not what was written. */
  decode(bytes: Uint8Array, ctx: PayloadContext): Uint8Array;
}

/** Options of {@link createPayloadCodec}. */
export interface PayloadCodecOptions {
  /** Keys to encrypt with (the active one) and decrypt with (any). Without it nothing is encrypted. */
  encryption?: Keyring;
  /**
   * Compress payloads of at least this many bytes (when it makes them smaller).
   * @defaultValue undefined: never compress
   */
  compressThresholdBytes?: number;
  /**
   * Under encryption, still read unencrypted data written before encryption was turned on.
   * @defaultValue false
   */
  allowPlaintext?: boolean;
  /** @defaultValue {@link DEFAULT_MAX_DECODED_BYTES} */
  maxDecodedBytes?: number;
}

/** True when the bytes start like a frame (as opposed to a plain JSON record). */
export function isPayloadFrame(bytes: Uint8Array): boolean {
  return bytes.length > 0 && bytes[0] === FRAME_MAGIC;
}

/** Builds a codec; with no option set it is the identity (see {@link PayloadCodec.identity}). */
export function createPayloadCodec(options: PayloadCodecOptions = {}): PayloadCodec {
  const threshold = options.compressThresholdBytes;
  if (threshold !== undefined && !(Number.isSafeInteger(threshold) && threshold >= 0)) {
    throw new TypeError(`compressThresholdBytes must be a whole number >= 0; got ${threshold}`);
  }
  return new FramingCodec(
    options.encryption,
    threshold,
    options.allowPlaintext ?? false,
    options.maxDecodedBytes ?? DEFAULT_MAX_DECODED_BYTES,
  );
}

class FramingCodec implements PayloadCodec {
  readonly identity: boolean;

  constructor(
    private readonly keys: Keyring | undefined,
    private readonly threshold: number | undefined,
    private readonly allowPlaintext: boolean,
    private readonly maxDecodedBytes: number,
  ) {
    this.identity = keys === undefined && threshold === undefined;
  }

  encode(plain: Uint8Array, ctx: PayloadContext): Uint8Array {
    if (this.identity) return plain;
    let body = plain;
    let flags = 0;
    if (this.threshold !== undefined && plain.length >= this.threshold) {
      const packed = deflateSync(plain);
      // Only worth a frame if it pays for itself (the header is 4 bytes without encryption).
      const overhead = this.keys === undefined ? FIXED_HEADER_BYTES : 0;
      if (packed.length + overhead < plain.length) {
        body = packed;
        flags |= FRAME_FLAG_COMPRESSED;
      }
    }
    if (this.keys === undefined) {
      return flags === 0 ? plain : Buffer.concat([Buffer.from([FRAME_MAGIC, FRAME_VERSION, flags, 0]), body]);
    }
    const key = this.keys.active;
    const header = frameHeader(flags | FRAME_FLAG_ENCRYPTED, key.id);
    const iv = randomFillSync(Buffer.allocUnsafe(IV_BYTES));
    const cipher = createCipheriv(CIPHER, keyObjectOf(key), iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(header, ctx));
    const head = cipher.update(body);
    const tail = cipher.final();
    return Buffer.concat([header, iv, head, tail, cipher.getAuthTag()]);
  }

  decode(bytes: Uint8Array, ctx: PayloadContext): Uint8Array {
    if (bytes.length === 0 || bytes[0] !== FRAME_MAGIC) {
      if (this.keys === undefined) return bytes;
      if (this.allowPlaintext && bytes[0] === JSON_OPEN_BRACE) return bytes;
      if (this.allowPlaintext) {
        throw fail(
          ctx,
          `it is neither an encrypted frame nor a plain JSON record (${describeStart(bytes)}); it was damaged or not written by Baton`,
        );
      }
      throw new PlaintextRefusedError(
        ctx.runId,
        ctx.label ?? ctx.what,
        `it is not encrypted (${describeStart(bytes)}) but encryption is configured. If it was written before ` +
          `encryption was turned on, set ${PAYLOAD_ENV.allowPlaintext}=true until that data is gone; otherwise ` +
          'someone wrote it around Baton: do not resume from it',
      );
    }
    if (bytes.length < FIXED_HEADER_BYTES) throw fail(ctx, truncated(bytes.length, FIXED_HEADER_BYTES));
    const version = bytes[1]!;
    const flags = bytes[2]!;
    const idLength = bytes[3]!;
    if (version !== FRAME_VERSION) {
      throw fail(
        ctx,
        `its frame format version is ${version} but this Baton reads version ${FRAME_VERSION}; ` +
          'if a newer Baton wrote it, upgrade this worker; otherwise the frame is damaged',
      );
    }
    if ((flags & ~KNOWN_FLAGS) !== 0) {
      throw fail(
        ctx,
        `its frame has unknown flags 0x${hex(flags)}; the frame is damaged or from a newer Baton`,
      );
    }
    const encrypted = (flags & FRAME_FLAG_ENCRYPTED) !== 0;
    if (encrypted !== idLength > 0) {
      throw fail(
        ctx,
        `its frame header is inconsistent (flags 0x${hex(flags)}, key id length ${idLength}); the frame is damaged`,
      );
    }
    const headerLength = FIXED_HEADER_BYTES + idLength;
    const minimum = headerLength + (encrypted ? IV_BYTES + TAG_BYTES : 0);
    if (bytes.length < minimum) throw fail(ctx, truncated(bytes.length, minimum));
    let body = bytes.subarray(headerLength);
    if (encrypted) {
      body = this.decrypt(bytes, headerLength, ctx);
    } else if (this.keys !== undefined && !this.allowPlaintext) {
      throw fail(
        ctx,
        `it is a frame without encryption, but encryption is configured; set ${PAYLOAD_ENV.allowPlaintext}=true ` +
          'while data written before encryption was turned on remains',
      );
    }
    if ((flags & FRAME_FLAG_COMPRESSED) === 0) return body;
    try {
      return inflateSync(body, { maxOutputLength: this.maxDecodedBytes });
    } catch (cause) {
      const tooLarge = (cause as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE';
      throw fail(
        ctx,
        tooLarge
          ? `it decompresses to more than ${this.maxDecodedBytes} bytes, the limit (maxDecodedBytes)`
          : `its compressed body is corrupt (${(cause as Error).message}); the frame was damaged or truncated`,
        cause,
      );
    }
  }

  private decrypt(bytes: Uint8Array, headerLength: number, ctx: PayloadContext): Uint8Array {
    const keyId = Buffer.from(bytes.subarray(FIXED_HEADER_BYTES, headerLength)).toString('latin1');
    if (!KEY_ID_PATTERN.test(keyId)) {
      throw fail(ctx, 'its frame carries a malformed key id; the frame is damaged');
    }
    if (this.keys === undefined) {
      throw new MissingKeyError(
        ctx.runId,
        ctx.label ?? ctx.what,
        keyId,
        'encryption',
        `it is encrypted with key ${keyId} but no encryption key is configured; set ${PAYLOAD_ENV.encryptionKeys} ` +
          `with key ${keyId} in it`,
      );
    }
    const key = this.keys.get(keyId);
    if (key === undefined) {
      throw new MissingKeyError(
        ctx.runId,
        ctx.label ?? ctx.what,
        keyId,
        'encryption',
        `it is encrypted with key ${keyId}, which is not in ${this.keys.source} (it holds ${this.keys.ids.join(', ')}); ` +
          `add key ${keyId} back to read it: keep every key as long as data written with it exists`,
      );
    }
    const header = bytes.subarray(0, headerLength);
    const iv = bytes.subarray(headerLength, headerLength + IV_BYTES);
    const tag = bytes.subarray(bytes.length - TAG_BYTES);
    const ciphertext = bytes.subarray(headerLength + IV_BYTES, bytes.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv(CIPHER, keyObjectOf(key), iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(additionalData(header, ctx));
      decipher.setAuthTag(tag);
      const head = decipher.update(ciphertext);
      return Buffer.concat([head, decipher.final()]);
    } catch (cause) {
      throw fail(
        ctx,
        `AES-256-GCM authentication with key ${keyId} failed: the bytes were altered or truncated, belong to ` +
          `another run or purpose, or key ${keyId} in ${this.keys.source} is not the key that wrote them. ` +
          'Do not resume from it; restore the data or fail the run',
        cause,
      );
    }
  }
}

/** A codec that never compresses, encrypts or refuses anything: returns what it is given. */
export const IDENTITY_PAYLOAD_CODEC: PayloadCodec = createPayloadCodec();

function frameHeader(flags: number, keyId: string): Buffer {
  const id = Buffer.from(keyId, 'latin1');
  const header = Buffer.allocUnsafe(FIXED_HEADER_BYTES + id.length);
  header[0] = FRAME_MAGIC;
  header[1] = FRAME_VERSION;
  header[2] = flags;
  header[3] = id.length;
  id.copy(header, FIXED_HEADER_BYTES);
  return header;
}

function additionalData(header: Uint8Array, ctx: PayloadContext): Buffer {
  return Buffer.concat([header, lengthPrefixed(ctx.runId), lengthPrefixed(ctx.what)]);
}

function lengthPrefixed(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const length = Buffer.allocUnsafe(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function fail(ctx: PayloadContext, detail: string, cause?: unknown): CheckpointIntegrityError {
  return new CheckpointIntegrityError(ctx.runId, ctx.label ?? ctx.what, detail, { cause });
}

function truncated(length: number, needed: number): string {
  return `its frame is truncated: ${length} bytes where the header needs at least ${needed}; restore the data or fail the run`;
}

function describeStart(bytes: Uint8Array): string {
  return bytes.length === 0 ? 'empty' : `${bytes.length} bytes starting with 0x${hex(bytes[0]!)}`;
}

function hex(byte: number): string {
  return byte.toString(16).padStart(2, '0');
}
