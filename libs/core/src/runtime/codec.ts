/**
 * Versioned codecs for journal entries and run messages. The wire form is UTF-8 JSON with a
 * leading version field `v`; a decoder refuses versions it does not know with a CodecError that
 * says which version it found, so an old worker never misreads a newer writer's bytes.
 */
import { CodecError } from '../adapter/errors.js';
import {
  isPromiseEntry,
  JOURNAL_ENTRY_TYPES,
  type AttributesSetEntry,
  type JournalEntry,
  type PatchMarkerEntry,
  type UpdateAcceptedEntry,
  type UpdateCompletedEntry,
} from '../shared/journal.js';
import type { RunMessage, RunMessageKind } from './messages.js';
import { isSealedValue, SEALED_VALUE_FIELD } from './payload/sealed-shape.js';
import { startFieldProblem } from '../author/start-fields.js';
import { unencodableEntries, unencodableMessage, unencodableValue } from './unencodable.js';

/**
 * Newest wire version of journal records this Baton reads and writes. Version 2 records hold
 * payload references (docs/large-payloads.md); version 3 records hold entries of a conversation
 * with the running workflow: updates (UpdateAccepted, UpdateCompleted: docs/updates.md), durable
 * promises (PromiseCreated, PromiseCompleted, PromiseTimedOut: docs/promises.md) and search
 * attributes (AttributesSet: docs/search-attributes.md), which a worker that does not know them
 * would replay without their steps or values. A record is written with the lowest version that
 * holds it (1 with none of these), so a worker of an older Baton keeps reading it during a rolling
 * deploy and refuses (never misreads) one that it cannot replay.
 */
export const JOURNAL_CODEC_VERSION = 3;
/** The version of records with a payload reference and none of version 3's entries. */
const JOURNAL_REF_VERSION = 2;
/**
 * Newest wire version of run-queue messages. As for records, a message is written with the lowest
 * version that holds it: 2 when a payload reference is inside, 3 when its input or payload is
 * sealed (docs/integrity.md), so an older worker refuses such a message (dead-lettered, redriven
 * after the upgrade) and never runs a workflow with the sealed form as its input.
 */
export const MESSAGE_CODEC_VERSION = 3;
/** The version of messages with a payload reference and no sealed value. */
const REF_VERSION = 2;
/** The version without payload references. */
const BASE_VERSION = 1;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const ENTRY_TYPES = new Set<string>(JOURNAL_ENTRY_TYPES);
const MESSAGE_KINDS = new Set<RunMessageKind>(['start', 'resume', 'wake', 'signal', 'cancel']);

/**
 * The UTF-8 JSON of `value`; a value with no JSON form (a BigInt, a cycle, a throwing toJSON)
 * raises UnencodableValueError naming `what` and the problem's path.
 */
export function encodeJson(value: unknown, what = 'the value'): Uint8Array {
  try {
    return encoder.encode(JSON.stringify(value));
  } catch (cause) {
    // Only now is the value walked, to say where the problem is: the common case encodes once.
    throw unencodableValue(what, value, cause);
  }
}

function parseVersioned(bytes: Uint8Array, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(bytes));
  } catch (cause) {
    throw new CodecError(`${what} is not valid UTF-8 JSON (${bytes.byteLength} bytes)`, { cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CodecError(`${what} must be a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

function holdsRef(entry: JournalEntry): boolean {
  const fields = entry as {
    resultRef?: unknown;
    payloadRef?: unknown;
    argsRef?: unknown;
    valueRef?: unknown;
  };
  return (
    fields.resultRef !== undefined ||
    fields.payloadRef !== undefined ||
    fields.argsRef !== undefined ||
    fields.valueRef !== undefined
  );
}

function isUpdateEntry(entry: JournalEntry): boolean {
  return entry.type === 'UpdateAccepted' || entry.type === 'UpdateCompleted';
}

/** The lowest journal codec version that holds `entries` (see {@link JOURNAL_CODEC_VERSION}). */
function journalVersionFor(entries: readonly JournalEntry[]): number {
  if (
    entries.some((entry) => isUpdateEntry(entry) || isPromiseEntry(entry) || entry.type === 'AttributesSet')
  )
    return JOURNAL_CODEC_VERSION;
  return entries.some(holdsRef) ? JOURNAL_REF_VERSION : BASE_VERSION;
}

/**
 * Encodes a batch of entries appended together (one transport message). An entry whose value has
 * no JSON form raises UnencodableValueError naming the entry (`result of activity x (step #3)`).
 */
export function encodeEntries(entries: readonly JournalEntry[]): Uint8Array {
  const record = { v: journalVersionFor(entries), entries };
  try {
    return encoder.encode(JSON.stringify(record));
  } catch (cause) {
    throw unencodableEntries(entries, cause);
  }
}

/** Decodes a batch written by encodeEntries; `runId` names the run in errors. */
export function decodeEntries(bytes: Uint8Array, runId: string): JournalEntry[] {
  const obj = parseVersioned(bytes, `journal record of run ${runId}`);
  if (!readable(obj.v, JOURNAL_CODEC_VERSION)) {
    throw new CodecError(
      `journal record of run ${runId} has codec version ${String(obj.v)}; this worker reads versions ${BASE_VERSION} to ${JOURNAL_CODEC_VERSION}. ` +
        'Upgrade the worker before reading journals written by a newer one.',
    );
  }
  if (!Array.isArray(obj.entries))
    throw new CodecError(`journal record of run ${runId} has no entries array`);
  for (const entry of obj.entries as unknown[]) {
    const e = entry as Partial<JournalEntry> | null;
    if (
      typeof e !== 'object' ||
      e === null ||
      !ENTRY_TYPES.has(String(e.type)) ||
      typeof e.epoch !== 'number'
    ) {
      throw new CodecError(
        `journal record of run ${runId} holds an entry of unknown type ${String(e?.type)}`,
      );
    }
    if (e.type === 'PatchMarker') checkPatchMarker(e, runId);
    if (e.type === 'UpdateAccepted' || e.type === 'UpdateCompleted') checkUpdateEntry(e, runId);
    if (e.type === 'AttributesSet') checkAttributesSet(e, runId);
  }
  return obj.entries as JournalEntry[];
}

/** A PatchMarker decides a branch on replay: a malformed one must not be read as "no patch". */
function checkPatchMarker(e: Partial<PatchMarkerEntry>, runId: string): void {
  if (typeof e.changeId !== 'string' || e.changeId.length === 0 || !Number.isInteger(e.atSeq)) {
    throw new CodecError(
      `journal record of run ${runId} holds a PatchMarker without a non-empty 'changeId' and an integer 'atSeq'`,
    );
  }
}

/** An UpdateAccepted starts a handler on replay: one without its id and name cannot be replayed. */
function checkUpdateEntry(e: Partial<UpdateAcceptedEntry | UpdateCompletedEntry>, runId: string): void {
  if (typeof e.updateId !== 'string' || e.updateId.length === 0 || typeof e.name !== 'string') {
    throw new CodecError(
      `journal record of run ${runId} holds an ${String(e.type)} without a non-empty 'updateId' and a 'name'`,
    );
  }
}

/** An AttributesSet settles a step on replay: one without its seq and changes must not be read as empty. */
function checkAttributesSet(e: Partial<AttributesSetEntry>, runId: string): void {
  const { attributes } = e;
  if (
    !Number.isInteger(e.seq) ||
    typeof attributes !== 'object' ||
    attributes === null ||
    Array.isArray(attributes)
  ) {
    throw new CodecError(
      `journal record of run ${runId} holds an AttributesSet without an integer 'seq' and an 'attributes' object`,
    );
  }
}

/** True for a version from 1 up to `newest`. */
function readable(v: unknown, newest: number): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= BASE_VERSION && v <= newest;
}

/** Encodes a run message; an input or payload with no JSON form raises UnencodableValueError naming it. */
export function encodeMessage(message: RunMessage): Uint8Array {
  const fields = message as { inputRef?: unknown; payloadRef?: unknown; input?: unknown; payload?: unknown };
  const v =
    isSealedValue(fields.input) || isSealedValue(fields.payload)
      ? MESSAGE_CODEC_VERSION
      : fields.inputRef !== undefined || fields.payloadRef !== undefined
        ? REF_VERSION
        : BASE_VERSION;
  try {
    return encoder.encode(JSON.stringify({ v, ...message }));
  } catch (cause) {
    throw unencodableMessage(message, cause);
  }
}

/**
 * How deeply a run message's JSON may nest (the message object itself is level 1). Deeper values
 * cannot be stored: encoding them overflows the stack, and Redis' Lua JSON stops at 1000 levels.
 * Refusing them at decode makes such a message poison at once instead of a store error that is
 * retried until `maxDeliveries`. Generous for real data, with room for the levels a journal entry
 * and a checkpoint add around a value.
 */
export const MAX_MESSAGE_DEPTH = 256;

/** Decodes and validates a run-queue message; every failure names the field that is wrong. */
export function decodeMessage(bytes: Uint8Array): RunMessage {
  const obj = parseVersioned(bytes, 'run message');
  if (!readable(obj.v, MESSAGE_CODEC_VERSION)) {
    throw new CodecError(
      `run message has codec version ${String(obj.v)}; this worker reads versions ${BASE_VERSION} to ${MESSAGE_CODEC_VERSION}`,
    );
  }
  const kind = obj.kind as RunMessageKind;
  if (!MESSAGE_KINDS.has(kind))
    throw new CodecError(`run message has unknown kind ${JSON.stringify(obj.kind)}`);
  requireString(obj, 'runId', kind);
  checkDepth(obj, kind);
  optionalString(obj, 'traceparent', kind, true);
  switch (kind) {
    case 'start':
      optionalString(obj, 'idempotencyKey', kind, true);
      // The client's own checks (start-fields.ts): a name or version no worker can register, or
      // an empty key (one store keeps it as "no key", another as a key), is poison at once.
      checkStartFields(obj);
      optionalRef(obj, 'inputRef', kind);
      optionalSealed(obj, 'input', kind);
      optionalFinite(obj, 'enqueuedAt', kind);
      break;
    case 'resume':
      // Any non-empty string: a newer worker may name a reason this one does not know yet.
      requireString(obj, 'reason', kind);
      optionalFinite(obj, 'since', kind);
      break;
    case 'wake':
      requireString(obj, 'reason', kind);
      break;
    case 'signal':
      requireString(obj, 'name', kind);
      requireString(obj, 'signalId', kind);
      optionalRef(obj, 'payloadRef', kind);
      optionalSealed(obj, 'payload', kind);
      break;
    case 'cancel':
      optionalString(obj, 'reason', kind, false);
      break;
  }
  delete obj.v;
  return obj as unknown as RunMessage;
}

function checkStartFields(obj: Record<string, unknown>): void {
  const refused = startFieldProblem({
    workflow: obj.workflow,
    version: obj.version,
    idempotencyKey: obj.idempotencyKey,
  });
  if (refused !== undefined) {
    throw new CodecError(`start message field '${refused.field}' ${refused.problem}`);
  }
}

function requireString(obj: Record<string, unknown>, field: string, kind: string): void {
  if (typeof obj[field] !== 'string' || (obj[field] as string).length === 0) {
    throw new CodecError(`${kind} message field '${field}' must be a non-empty string`);
  }
}

/** What a refused value looked like, short: never its whole content (it may be large). */
function found(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * An optional string field: absent, or a string. With `nullable`, null (what a writer may put for
 * "none") is read as absent. Anything else would be stored as its string form ("[object Object]"),
 * so two different values could meet under one key.
 */
function optionalString(obj: Record<string, unknown>, field: string, kind: string, nullable: boolean): void {
  const value = obj[field];
  if (value === undefined || typeof value === 'string') return;
  if (value === null && nullable) {
    delete obj[field];
    return;
  }
  throw new CodecError(
    `${kind} message field '${field}' must be a string${nullable ? ' or null' : ''} when present; found ${found(value)}`,
  );
}

function optionalFinite(obj: Record<string, unknown>, field: string, kind: string): void {
  const value = obj[field];
  if (value === undefined || (typeof value === 'number' && Number.isFinite(value))) return;
  throw new CodecError(
    `${kind} message field '${field}' must be a number when present; found ${found(value)}`,
  );
}

/** A payload reference: `{ sha256: 64 hex digits, size: integer >= 0, run: string }` when present. */
function optionalRef(obj: Record<string, unknown>, field: string, kind: string): void {
  const ref = obj[field] as Record<string, unknown> | null | undefined;
  if (ref === undefined) return;
  if (
    typeof ref === 'object' &&
    ref !== null &&
    !Array.isArray(ref) &&
    typeof ref.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(ref.sha256) &&
    Number.isInteger(ref.size) &&
    (ref.size as number) >= 0 &&
    typeof ref.run === 'string' &&
    ref.run.length > 0
  )
    return;
  throw new CodecError(
    `${kind} message field '${field}' must be a payload reference { sha256: 64 hex digits, size: integer, run: string }; found ${found(ref)}`,
  );
}

/**
 * A value that claims to be sealed (it has the marker field) must have the whole shape: a half
 * sealed value would otherwise run as the workflow's input.
 */
function optionalSealed(obj: Record<string, unknown>, field: string, kind: string): void {
  const value = obj[field];
  if (typeof value !== 'object' || value === null || !(SEALED_VALUE_FIELD in value) || isSealedValue(value))
    return;
  throw new CodecError(
    `${kind} message field '${field}' has the '${SEALED_VALUE_FIELD}' marker but not the sealed form ` +
      `{ "${SEALED_VALUE_FIELD}": 1, key: string, frame: base64 string }`,
  );
}

/**
 * Refuses a message nested deeper than {@link MAX_MESSAGE_DEPTH}. Walks iteratively: the value
 * may be nested far deeper than the stack allows recursion.
 */
function checkDepth(obj: Record<string, unknown>, kind: string): void {
  const stack: Array<[unknown, number]> = [[obj, 1]];
  let deepest = 1;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    const children = Array.isArray(value) ? value : Object.values(value as object);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  if (deepest > MAX_MESSAGE_DEPTH) {
    throw new CodecError(
      `${kind} message nests ${deepest} levels deep; the limit of a run message is ${MAX_MESSAGE_DEPTH} ` +
        '(no store can keep deeper values): flatten the input or payload',
    );
  }
}
