/**
 * Large payloads by reference (the claim-check pattern, docs/large-payloads.md): a value whose JSON
 * is above the threshold is stored in a {@link PayloadStore} under its run and the SHA-256 of the
 * stored bytes, and the journal entry, checkpoint or run message carries a {@link PayloadRef}
 * instead. Workflow code never sees a reference: the worker resolves them before replay.
 *
 * Which values: activity results (ActivityCompleted.result), run results (RunCompleted.result),
 * signal payloads (SignalReceived.payload, and the signal message), run inputs (the start
 * message), update arguments and results (UpdateAccepted.args, UpdateCompleted.result), durable
 * promise values (PromiseCompleted.value). Everything else in an entry is small by construction.
 *
 * Invariants:
 * 1. A reference is handed out only after its bytes are durable in the payload store, so no entry
 *    or message names bytes that were never written.
 * 2. Every read checks the bytes' SHA-256 against the reference before decoding them: missing or
 *    different bytes raise CheckpointIntegrityError naming the run, the entry and the location,
 *    and the run is never resumed from them.
 * 3. Entries handed in are never changed: one whose value goes by reference is copied. An array
 *    with nothing to store or resolve comes back as it was (the hot path allocates nothing).
 * 4. The stored bytes go through the payload codec (compression, encryption bound to the run), so
 *    a large value is protected exactly as it would have been inside a journal record.
 */
import { createHash } from 'node:crypto';
import type { PayloadStore } from '../../adapter/contracts/payloads.js';
import { invalidOption } from '../../shared/errors.js';
import { CheckpointIntegrityError } from '../../adapter/errors.js';
import type { JournalEntry, PayloadRef } from '../../shared/journal.js';
import { unencodableValue } from '../unencodable.js';
import {
  FRAME_MAGIC,
  IDENTITY_PAYLOAD_CODEC,
  type PayloadCodec,
  type PayloadContext,
} from './payload-codec.js';

/** The purpose large payloads are bound to in the codec (and how errors name them). */
export const LARGE_PAYLOAD = 'large payload';
/** Values whose JSON is larger than this many bytes go by reference unless configured otherwise. */
export const DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES = 64 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Options of {@link ClaimCheck}. */
export interface ClaimCheckOptions {
  /** Where the bytes go: the store (every store is a payload store) or the NATS object store. */
  payloads: PayloadStore;
  /**
   * Values whose JSON is larger go by reference; Infinity stores nothing (and still resolves).
   * @defaultValue DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES
   */
  thresholdBytes?: number;
  /** Compression and encryption of the stored bytes. @defaultValue the identity */
  codec?: PayloadCodec;
}

/** How a worker or client asks for the claim check (`largePayloads` in their options). */
export interface LargePayloadOptions {
  /**
   * Values whose JSON is larger go by reference; `'off'` sends everything inline.
   * @defaultValue `BATON_PAYLOAD_REF_THRESHOLD_BYTES` in the apps, else 65536
   */
  thresholdBytes?: number | 'off';
  /** Where the bytes go. @defaultValue the worker's or client's store */
  payloads?: PayloadStore;
}

/**
 * The claim check `given` asks for, storing in `given.payloads` or else `store`, encoding with
 * the fleet's payload codec; undefined only when there is nowhere to store (a client without a store). ConfigError
 * names a bad threshold. `'off'` gives a claim check that stores nothing but still reads the
 * references other writers made.
 */
export function resolveClaimCheck(
  given: LargePayloadOptions | undefined,
  store: PayloadStore | undefined,
  codec: PayloadCodec,
): ClaimCheck | undefined {
  const threshold = given?.thresholdBytes ?? DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES;
  if (threshold !== 'off' && (!Number.isInteger(threshold) || threshold < 1)) {
    const expected = "must be a positive integer or 'off'";
    throw invalidOption(
      { option: 'largePayloads.thresholdBytes', value: String(threshold), expected: `it ${expected}` },
      `largePayloads.thresholdBytes ${expected}, got ${String(threshold)}`,
    );
  }
  const payloads = given?.payloads ?? store;
  // Off still reads references other writers made; it only stops making them.
  const thresholdBytes = threshold === 'off' ? Number.POSITIVE_INFINITY : threshold;
  return payloads === undefined ? undefined : new ClaimCheck({ payloads, thresholdBytes, codec });
}

/** The field of an entry that may be large, and the field that holds its reference instead. */
type Carrier =
  | { value: 'result'; ref: 'resultRef' }
  | { value: 'payload'; ref: 'payloadRef' }
  | { value: 'args'; ref: 'argsRef' }
  | { value: 'value'; ref: 'valueRef' };
const RESULT: Carrier = { value: 'result', ref: 'resultRef' };
const PAYLOAD: Carrier = { value: 'payload', ref: 'payloadRef' };
const ARGS: Carrier = { value: 'args', ref: 'argsRef' };
const VALUE: Carrier = { value: 'value', ref: 'valueRef' };

function carrierOf(entry: JournalEntry): Carrier | undefined {
  switch (entry.type) {
    case 'ActivityCompleted':
    case 'RunCompleted':
    case 'UpdateCompleted':
      return RESULT;
    case 'SignalReceived':
      return PAYLOAD;
    case 'UpdateAccepted':
      return ARGS;
    case 'PromiseCompleted':
      return VALUE;
    default:
      return undefined;
  }
}

/** How errors name an entry. */
function entryLabel(entry: JournalEntry): string {
  return 'seq' in entry ? `${entry.type} entry of step ${entry.seq}` : `${entry.type} entry`;
}

function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** True when entries (or a checkpoint's entries) hold a reference. */
export function holdsPayloadRefs(entries: readonly JournalEntry[]): boolean {
  return entries.some((entry) => {
    const carrier = carrierOf(entry);
    return carrier !== undefined && (entry as unknown as Record<string, unknown>)[carrier.ref] !== undefined;
  });
}

/** Stores large values by reference and reads them back. One per worker or client. */
export class ClaimCheck {
  readonly payloads: PayloadStore;
  readonly thresholdBytes: number;
  private readonly codec: PayloadCodec;

  constructor(options: ClaimCheckOptions) {
    this.payloads = options.payloads;
    this.thresholdBytes = options.thresholdBytes ?? DEFAULT_CLAIM_CHECK_THRESHOLD_BYTES;
    this.codec = options.codec ?? IDENTITY_PAYLOAD_CODEC;
  }

  /**
   * The value's JSON bytes when they are above the threshold, else undefined. A value with no JSON
   * form raises UnencodableValueError naming `what`, before anything is stored.
   */
  private largeJson(value: unknown, what = 'the value'): Uint8Array | undefined {
    if (value === undefined || value === null || typeof value === 'number' || typeof value === 'boolean')
      return undefined;
    let json: string | undefined;
    try {
      json = JSON.stringify(value) as string | undefined;
    } catch (cause) {
      throw unencodableValue(what, value, cause);
    }
    // A UTF-16 code unit is at most 3 UTF-8 bytes: most values are decided without encoding.
    if (json === undefined || json.length * 3 <= this.thresholdBytes) return undefined;
    const bytes = encoder.encode(json);
    return bytes.byteLength > this.thresholdBytes ? bytes : undefined;
  }

  /**
   * Stores `value` when its JSON is above the threshold and returns its reference; else undefined.
   * `what` names the value in the UnencodableValueError raised when it has no JSON form.
   */
  async offloadValue(runId: string, value: unknown, what?: string): Promise<PayloadRef | undefined> {
    const plain = this.largeJson(value, what);
    return plain === undefined ? undefined : this.put(runId, plain);
  }

  private async put(runId: string, plain: Uint8Array): Promise<PayloadRef> {
    const stored = this.codec.identity ? plain : this.codec.encode(plain, { runId, what: LARGE_PAYLOAD });
    const sha256 = sha256Hex(stored);
    await this.payloads.put(runId, sha256, stored);
    return { sha256, size: stored.byteLength, run: runId };
  }

  /** `entries` with every large value stored and replaced by its reference (copies; see invariant 3). */
  async offloadEntries(runId: string, entries: readonly JournalEntry[]): Promise<readonly JournalEntry[]> {
    let out: JournalEntry[] | undefined;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const carrier = carrierOf(entry);
      if (carrier === undefined) continue;
      const fields = entry as unknown as Record<string, unknown>;
      const plain = this.largeJson(fields[carrier.value]);
      if (plain === undefined) continue;
      const ref = await this.put(runId, plain);
      const copy: Record<string, unknown> = { ...fields, [carrier.ref]: ref };
      delete copy[carrier.value];
      out ??= entries.slice();
      out[i] = copy as unknown as JournalEntry;
    }
    return out ?? entries;
  }

  /**
   * `entries` with every reference replaced by its value, read from the payload store of `runId`
   * and verified (copies; the same array when none holds a reference).
   */
  async resolveEntries(runId: string, entries: readonly JournalEntry[]): Promise<JournalEntry[]> {
    let out: JournalEntry[] | undefined;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const carrier = carrierOf(entry);
      const ref =
        carrier && ((entry as unknown as Record<string, unknown>)[carrier.ref] as PayloadRef | undefined);
      if (carrier === undefined || ref === undefined) continue;
      const copy: Record<string, unknown> = { ...entry };
      copy[carrier.value] = await this.resolve(runId, ref, entryLabel(entry));
      delete copy[carrier.ref];
      out ??= entries.slice();
      out[i] = copy as unknown as JournalEntry;
    }
    return out ?? (entries as JournalEntry[]);
  }

  /**
   * The value a reference stands for, read from `runId`'s payloads. `label` names what holds the
   * reference in errors (e.g. `start message input`).
   */
  async resolve(runId: string, ref: PayloadRef, label: string): Promise<unknown> {
    const where = `its ${LARGE_PAYLOAD} ${ref.sha256.slice(0, 16)} (${ref.size} bytes, in ${this.payloads.location})`;
    checkRef(ref, runId, label);
    const bytes = await this.payloads.get(runId, ref.sha256);
    if (bytes === undefined) {
      throw new CheckpointIntegrityError(
        runId,
        label,
        `${where} is missing: it was deleted, or written to another payload location ` +
          '(check BATON_PAYLOAD_REF_LOCATION on every worker and client)',
      );
    }
    if (sha256Hex(bytes) !== ref.sha256) {
      throw new CheckpointIntegrityError(
        runId,
        label,
        `${where} does not match its SHA-256: it was changed after it was written`,
      );
    }
    const ctx: PayloadContext = { runId: ref.run, what: LARGE_PAYLOAD, label: `${label}: ${LARGE_PAYLOAD}` };
    const plain = this.codec.identity && bytes[0] !== FRAME_MAGIC ? bytes : this.codec.decode(bytes, ctx);
    try {
      return JSON.parse(decoder.decode(plain)) as unknown;
    } catch (cause) {
      throw new CheckpointIntegrityError(runId, label, `${where} is not UTF-8 JSON`, { cause });
    }
  }

  /**
   * Copies the payloads `entries` refer to from run `from` to run `to` (a fork: the new run needs
   * its own copies, since retention deletes payloads with their run). The references stay valid.
   */
  async copyPayloads(from: string, to: string, entries: readonly JournalEntry[]): Promise<void> {
    for (const entry of entries) {
      const carrier = carrierOf(entry);
      const ref =
        carrier && ((entry as unknown as Record<string, unknown>)[carrier.ref] as PayloadRef | undefined);
      if (ref === undefined) continue;
      const bytes = await this.payloads.get(from, ref.sha256);
      if (bytes === undefined) {
        throw new CheckpointIntegrityError(
          from,
          entryLabel(entry),
          `its ${LARGE_PAYLOAD} ${ref.sha256.slice(0, 16)} is missing from ${this.payloads.location}; the fork cannot copy it`,
        );
      }
      await this.payloads.put(to, ref.sha256, bytes);
    }
  }
}

/** A reference read from the bus or the store must have the shape this version writes. */
function checkRef(ref: PayloadRef, runId: string, label: string): void {
  if (
    typeof ref !== 'object' ||
    ref === null ||
    typeof ref.sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(ref.sha256) ||
    typeof ref.run !== 'string' ||
    !Number.isInteger(ref.size)
  ) {
    throw new CheckpointIntegrityError(
      runId,
      label,
      `its ${LARGE_PAYLOAD} reference is malformed (${JSON.stringify(ref)?.slice(0, 200)}); expected { sha256, size, run }`,
    );
  }
}
