/**
 * What a group record holds: the entries of several runs, appended together by one worker's
 * committer (group-journal.ts). Each part is one run's append, as the run's own journal would have
 * held it: the bytes are the writer's encoded entries, untouched (sealed, signed and linked as
 * configured), so reading a part back gives exactly what a per-run read gives.
 *
 * Layout, big-endian: the byte 0x47 ('G'), the format version 1, the part count (u32), then each
 * part: its run id's UTF-8 length (u16) and bytes, its data's length (u32) and bytes. A run has at
 * most one part in a record (the committer keeps a run's second append for the next record), so a
 * pointer names a record and the run finds its part by its id.
 */
import { BatonError } from '../shared/errors.js';

const MAGIC = 0x47;
const VERSION = 1;
const HEADER = 6;

/** One run's part of a group record. */
export interface GroupPart {
  runId: string;
  data: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The encoded size of a part, for the committer's record budget. */
export function partSize(runIdBytes: number, dataBytes: number): number {
  return 2 + runIdBytes + 4 + dataBytes;
}

/** Encodes parts (at most one per run) as one record. */
export function encodeGroupRecord(parts: readonly GroupPart[]): Uint8Array {
  // Measured without encoding (no allocation), then encoded straight into the record.
  const idLengths = parts.map((part) => Buffer.byteLength(part.runId, 'utf8'));
  let size = HEADER;
  parts.forEach((part, i) => (size += partSize(idLengths[i]!, part.data.length)));
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out[0] = MAGIC;
  out[1] = VERSION;
  view.setUint32(2, parts.length);
  let at = HEADER;
  parts.forEach((part, i) => {
    const idLength = idLengths[i]!;
    view.setUint16(at, idLength);
    encoder.encodeInto(part.runId, out.subarray(at + 2, at + 2 + idLength));
    at += 2 + idLength;
    view.setUint32(at, part.data.length);
    out.set(part.data, at + 4);
    at += 4 + part.data.length;
  });
  return out;
}

/** A group record this worker cannot read: not one, a newer format, or cut short. */
export class GroupRecordError extends BatonError {
  constructor(what: string, detail: string) {
    super('BATON_GROUP_RECORD_UNREADABLE', `${what} is not a readable group record: ${detail}`);
  }
}

/** Decodes a record into each run's data; `what` names it in errors (its log and position). */
export function decodeGroupRecord(data: Uint8Array, what: string): Map<string, Uint8Array> {
  if (data.length < HEADER || data[0] !== MAGIC) throw new GroupRecordError(what, 'it does not start as one');
  if (data[1] !== VERSION) {
    throw new GroupRecordError(
      what,
      `format version ${data[1]}, this worker reads version ${VERSION}; upgrade the worker`,
    );
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const count = view.getUint32(2);
  const parts = new Map<string, Uint8Array>();
  let at = HEADER;
  for (let i = 0; i < count; i++) {
    if (at + 2 > data.length) throw new GroupRecordError(what, `part ${i + 1} of ${count} is cut short`);
    const idLength = view.getUint16(at);
    const dataAt = at + 2 + idLength + 4;
    if (dataAt > data.length) throw new GroupRecordError(what, `part ${i + 1} of ${count} is cut short`);
    const runId = decoder.decode(data.subarray(at + 2, at + 2 + idLength));
    const length = view.getUint32(at + 2 + idLength);
    if (dataAt + length > data.length)
      throw new GroupRecordError(what, `part ${i + 1} of ${count} is cut short`);
    parts.set(runId, data.subarray(dataAt, dataAt + length));
    at = dataAt + length;
  }
  return parts;
}
