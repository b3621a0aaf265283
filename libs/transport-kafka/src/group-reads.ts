/**
 * Reads of group records by offset, coalesced per partition of the group topic (group-log.ts).
 *
 * What is asked for is a handful of nearby offsets per read: a run's pointers name consecutive
 * records of its writer's log, and other logs' records sit between them on a shared partition. A
 * dead worker's runs resume together, each asking for its own records of the same log. So every
 * read of one partition that arrives while a scan of it is in flight is served by the next scan,
 * and a scan fetches each run of nearby offsets wanted as one range (one fetch from its first
 * offset up to its last), never one request per offset.
 *
 * Invariants:
 * 1. A read answers only records whose key is its own log: an offset that holds another log's
 *    record is left out, as is one below the partition's log start (retention, deleteRecords) or
 *    at or past its end.
 * 2. Only acknowledged records are read: a fetch returns records up to the high watermark, and an
 *    acks=all append resolves only once the high watermark has passed it. Right after a leader
 *    change the new leader's high watermark may lag behind records the old one acknowledged; an
 *    offset wanted at or above the high watermark is therefore read again a few times (about 1.5 s
 *    in all) before it is left out. Positions come from pointers to acknowledged records, so that
 *    wait is only ever paid in a failover (or for a position that never existed).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Admin } from 'kafkajs';
import { PartitionBatches } from './partition-batches.js';
import { isOffsetOutOfRange, type FetchedRecord, type PartitionReader } from './partition-reader.js';

/**
 * Wanted offsets at most this far apart are fetched as one range. Reading the records between
 * (other logs', up to a few hundred KB each) is cheaper than another fetch round trip while the
 * gap is small; a wide gap (a run that slept for hours between two steps) gets a fetch of its own.
 */
export const MAX_RANGE_GAP = 16;

/** Waits before reading again offsets not yet visible (invariant 2): 1.5 s in all. */
const NOT_VISIBLE_RETRIES_MS = [100, 200, 400, 800];

/** Counters of the group reads, for tests and logs. */
export interface GroupReadStats {
  /** readGroupRecords calls served. */
  reads: number;
  /** Ranges fetched: one per run of nearby offsets per scan, however many reads it served. */
  ranges: number;
  /** Records fetched in those ranges, other logs' included (read amplification). */
  fetchedRecords: number;
}

interface GroupReadRequest {
  log: string;
  offsets: readonly number[];
  resolve(found: Map<number, FetchedRecord>): void;
  reject(err: unknown): void;
}

export class GroupReads {
  private readonly batches = new PartitionBatches<GroupReadRequest>((partition, batch) =>
    this.scan(partition, batch),
  );

  constructor(
    private readonly reader: PartitionReader,
    private readonly admin: Admin,
    private readonly topic: string,
    private readonly stats: GroupReadStats,
  ) {}

  /** The records of `log` at `offsets` of `partition` (offset → record); others are left out. */
  read(partition: number, log: string, offsets: readonly number[]): Promise<Map<number, FetchedRecord>> {
    if (offsets.length === 0) return Promise.resolve(new Map());
    return new Promise((resolve, reject) => {
      this.batches.add(partition, { log, offsets, resolve, reject });
    });
  }

  private async scan(partition: number, batch: GroupReadRequest[]): Promise<void> {
    const logs = new Set(batch.map((r) => r.log));
    const fetched = new Map<number, FetchedRecord>();
    try {
      let wanted = [...new Set(batch.flatMap((r) => r.offsets))].sort((a, b) => a - b);
      this.stats.reads += batch.length;
      for (let attempt = 0; ; attempt++) {
        const ranges = rangesOf(wanted, MAX_RANGE_GAP);
        const read = await Promise.all(ranges.map(([from, to]) => this.readRange(partition, from, to, logs)));
        this.stats.ranges += ranges.length;
        const unseen: number[] = [];
        read.forEach(({ records, next }, i) => {
          for (const record of records) fetched.set(record.offset, record);
          for (const offset of wanted) if (offset >= next && offset <= ranges[i]![1]) unseen.push(offset);
        });
        const wait = NOT_VISIBLE_RETRIES_MS[attempt];
        if (unseen.length === 0 || wait === undefined) break;
        await sleep(wait);
        await this.reader.refreshMetadata().catch(() => undefined);
        wanted = unseen;
      }
    } catch (err) {
      for (const request of batch) request.reject(err);
      return;
    }
    for (const request of batch) {
      const own = new Map<number, FetchedRecord>();
      for (const offset of request.offsets) {
        const record = fetched.get(offset);
        if (record !== undefined && record.key === request.log) own.set(offset, record);
      }
      request.resolve(own);
    }
  }

  /**
   * Records of `logs` in `from`..`to` (inclusive), what of it the partition still has, and `next`:
   * one past the last offset seen (offsets from it on were not visible).
   */
  private async readRange(
    partition: number,
    from: number,
    to: number,
    logs: ReadonlySet<string>,
  ): Promise<{ records: FetchedRecord[]; next: number }> {
    let fetchedRecords = 0;
    const accept = (key: string | null): boolean => {
      fetchedRecords++;
      return key !== null && logs.has(key);
    };
    try {
      return await this.reader.readUpTo(this.topic, partition, from, to, accept);
    } catch (err) {
      if (!isOffsetOutOfRange(err)) throw err;
      // Part of the range is gone (below the log start) or not there (past the end): read what is.
      const { low, high } = await this.bounds(partition);
      const start = Math.max(from, low);
      const end = Math.min(to, high - 1);
      if (start > end) return { records: [], next: Math.max(start, Math.min(from, high)) };
      return await this.reader.readUpTo(this.topic, partition, start, end, accept);
    } finally {
      this.stats.fetchedRecords += fetchedRecords;
    }
  }

  /** The partition's log start offset and high watermark now. */
  private async bounds(partition: number): Promise<{ low: number; high: number }> {
    const offsets = await this.admin.fetchTopicOffsets(this.topic);
    const found = offsets.find((o) => o.partition === partition);
    if (found === undefined) throw new Error(`no offsets known for ${this.topic}/${partition}`);
    return { low: Number(found.low), high: Number(found.high) };
  }
}

/** Sorted offsets cut into inclusive ranges wherever two neighbours are more than `gap` apart. */
export function rangesOf(sorted: readonly number[], gap: number): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (const offset of sorted) {
    const last = ranges[ranges.length - 1];
    if (last !== undefined && offset - last[1] <= gap) last[1] = offset;
    else ranges.push([offset, offset]);
  }
  return ranges;
}
