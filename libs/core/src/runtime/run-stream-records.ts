/**
 * What a run stream's record holds (contracts/run-streams.ts keeps it opaque) and the rules by
 * which writers and readers agree on its items, written once so both apply the same ones
 * (`StreamFold`):
 *
 * 1. A record is `{ v: 1, e: <writer's epoch>, i: [items] }`: each item has its sequence number,
 *    consecutive within the record and after the stream's last when it was written. A record with
 *    no items is a fence (a new owner's first record on a bus without optimistic append).
 * 2. A record whose epoch is below the highest epoch already read is a fenced writer's late
 *    record: it is ignored whole. (On a bus with optimistic append such a record can only land
 *    before the newer owner's first one; on Kafka it may land after, and is ignored.)
 * 3. An item whose sequence number is at or below the last one accepted is a repeat and ignored:
 *    a reader sees each sequence number once. Nothing is accepted after a close.
 * 4. Workflow writes are numbered by their order in the workflow (`o`): the fold keeps the
 *    highest, so a replaying writer skips the ones already in the stream.
 * 5. The bytes go through the run's payload codec (compressed, encrypted) like journal records.
 */
import { CodecError } from '../adapter/errors.js';
import type { StreamItem } from '../author/streams.js';
import type { JournalRecord } from '../adapter/contracts/transport.js';
import { encodeJson } from './codec.js';
import type { PayloadCodec } from './payload/payload-codec.js';

/** An item as stored: short field names, since token streams write many small ones. */
export interface WireStreamItem {
  /** Sequence number. */
  s: number;
  /** chunk, reset, close. */
  k: 'c' | 'r' | 'x';
  /** The chunk's value. */
  v?: unknown;
  /** The activity's step, for an activity's chunk or reset. */
  p?: number;
  /** The activity's attempt. */
  t?: number;
  /** The workflow write's number (rule 4). */
  o?: number;
}

interface WireRecord {
  v: 1;
  e: number;
  i: WireStreamItem[];
}

/** The payload purpose of a run stream record (bound into its encryption). */
export const RUN_STREAM_RECORD = 'run stream record';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The bytes of a record of `items` by a writer at `epoch`, through `codec` for the run `runId`. */
export function encodeStreamRecord(
  codec: PayloadCodec,
  runId: string,
  stream: string,
  epoch: number,
  items: readonly WireStreamItem[],
): Uint8Array {
  const plain = encodeJson(
    { v: 1, e: epoch, i: [...items] } satisfies WireRecord,
    `a chunk of run stream '${stream}'`,
  );
  return codec.encode(plain, { runId, what: RUN_STREAM_RECORD, label: `run stream '${stream}' record` });
}

function decodeStreamRecord(
  codec: PayloadCodec,
  runId: string,
  stream: string,
  record: JournalRecord,
): WireRecord {
  const label = `run stream '${stream}' record at position ${record.position}`;
  const plain = codec.decode(record.data, { runId, what: RUN_STREAM_RECORD, label });
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(plain));
  } catch (cause) {
    throw new CodecError(`run ${runId}: ${label} is not valid UTF-8 JSON`, { cause });
  }
  const shape = parsed as Partial<WireRecord> | null;
  if (shape?.v !== 1 || typeof shape.e !== 'number' || !Array.isArray(shape.i)) {
    throw new CodecError(`run ${runId}: ${label} is not a run stream record (version ${String(shape?.v)})`);
  }
  return shape as WireRecord;
}

/** The public form of a stored item. */
function itemOf(wire: WireStreamItem): StreamItem {
  if (wire.k === 'x') return { seq: wire.s, kind: 'close' };
  if (wire.k === 'r') return { seq: wire.s, kind: 'reset', step: wire.p ?? 0, attempt: wire.t ?? 0 };
  return {
    seq: wire.s,
    kind: 'chunk',
    value: wire.v,
    ...(wire.p !== undefined && { step: wire.p }),
    ...(wire.t !== undefined && { attempt: wire.t }),
  };
}

/** A stream's state after the records read so far, by the rules above. */
export class StreamFold {
  lastPosition = 0;
  lastSeq = 0;
  maxEpoch = 0;
  closed = false;
  /** The highest workflow write number accepted (rule 4). */
  lastOrdinal = 0;
  /** Per activity step, the `<epoch>:<attempt>` of its last accepted chunk or reset. */
  readonly attempts = new Map<number, string>();

  constructor(
    private readonly codec: PayloadCodec,
    readonly runId: string,
    readonly stream: string,
  ) {}

  /** Applies one record (in position order); answers the items it accepted. */
  apply(record: JournalRecord): StreamItem[] {
    if (record.position <= this.lastPosition) return [];
    const wire = decodeStreamRecord(this.codec, this.runId, this.stream, record);
    return this.accept(record.position, wire.e, wire.i);
  }

  /**
   * Applies a record already decoded: its position, its writer's epoch and its items (a writer's
   * own record, which it need not decode). Answers the items it accepted.
   */
  accept(position: number, epoch: number, items: readonly WireStreamItem[]): StreamItem[] {
    if (position <= this.lastPosition) return [];
    this.lastPosition = position;
    if (epoch < this.maxEpoch) return [];
    this.maxEpoch = epoch;
    const accepted: StreamItem[] = [];
    for (const item of items) {
      if (this.closed || !Number.isSafeInteger(item.s) || item.s <= this.lastSeq) continue;
      this.lastSeq = item.s;
      if (item.o !== undefined && item.o > this.lastOrdinal) this.lastOrdinal = item.o;
      if (item.p !== undefined && item.k !== 'x') this.attempts.set(item.p, `${epoch}:${item.t ?? 0}`);
      if (item.k === 'x') this.closed = true;
      accepted.push(itemOf(item));
    }
    return accepted;
  }

  /** Applies records in order; answers every item accepted. */
  applyAll(records: readonly JournalRecord[]): StreamItem[] {
    const accepted: StreamItem[] = [];
    for (const record of records) accepted.push(...this.apply(record));
    return accepted;
  }
}
