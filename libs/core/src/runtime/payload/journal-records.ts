/**
 * The journal side of the codec chain: one transport record (a batch of entries appended
 * together) in and out of the payload codec. These wrap encodeEntries/decodeEntries, so a worker
 * swaps them in where it encodes and decodes records today.
 */
import { decodeEntries, encodeEntries } from '../codec.js';
import type { JournalEntry } from '../../shared/journal.js';
import { FRAME_MAGIC, type PayloadCodec, type PayloadContext } from './payload-codec.js';

/** The purpose every journal record is bound to (constant: a writer does not know its position yet). */
export const JOURNAL_RECORD = 'journal record';

/** The codec context of one run's journal record; `position` (when read back) names it in errors. */
export function journalRecordContext(runId: string, position?: number): PayloadContext {
  return {
    runId,
    what: JOURNAL_RECORD,
    label: position === undefined ? JOURNAL_RECORD : `${JOURNAL_RECORD} at position ${position}`,
  };
}

/** encodeEntries, then the codec. */
export function encodeJournalRecord(
  entries: readonly JournalEntry[],
  runId: string,
  codec: PayloadCodec,
): Uint8Array {
  const plain = encodeEntries(entries);
  // The identity codec needs no context: skip building one on the hot path.
  return codec.identity ? plain : codec.encode(plain, journalRecordContext(runId));
}

/**
 * The codec, then decodeEntries. Throws CheckpointIntegrityError when the frame does not verify,
 * CodecError when the verified bytes are not a record this version reads.
 */
export function decodeJournalRecord(
  bytes: Uint8Array,
  runId: string,
  codec: PayloadCodec,
  position?: number,
): JournalEntry[] {
  const plain =
    codec.identity && bytes[0] !== FRAME_MAGIC
      ? bytes
      : codec.decode(bytes, journalRecordContext(runId, position));
  return decodeEntries(plain, runId);
}
