/**
 * Journal tail reads, coalesced per partition. A run's tail is found by scanning its partition,
 * which other runs share, so the cost of a read is the partition's traffic since the run's
 * checkpoint. When many runs resume at once (a dead worker's runs, all reaped together), reads of
 * one partition that arrive while a scan of it is in flight are served together by the next scan:
 * one pass from the lowest start to the highest end, each reader keeping its own key and range.
 */
import { PartitionBatches } from './partition-batches.js';
import type { FetchedRecord, PartitionReader } from './partition-reader.js';

interface TailRequest {
  key: string;
  /** First offset wanted. */
  from: number;
  /** Last offset wanted (inclusive); undefined: up to the end at scan time. */
  to: number | undefined;
  resolve(records: FetchedRecord[]): void;
  reject(err: unknown): void;
}

export class TailReads {
  private readonly batches = new PartitionBatches<TailRequest>((partition, batch) =>
    this.scan(partition, batch),
  );

  constructor(
    private readonly reader: PartitionReader,
    private readonly topic: string,
  ) {}

  read(partition: number, key: string, from: number, to: number | undefined): Promise<FetchedRecord[]> {
    return new Promise<FetchedRecord[]>((resolve, reject) => {
      this.batches.add(partition, { key, from, to, resolve, reject });
    });
  }

  private async scan(partition: number, batch: TailRequest[]): Promise<void> {
    const from = Math.min(...batch.map((r) => r.from));
    const to = batch.some((r) => r.to === undefined) ? undefined : Math.max(...batch.map((r) => r.to!));
    const keys = new Set(batch.map((r) => r.key));
    let records: FetchedRecord[];
    try {
      records = await this.reader.read(
        this.topic,
        partition,
        from,
        to,
        (key) => key !== null && keys.has(key),
      );
    } catch (err) {
      for (const request of batch) request.reject(err);
      return;
    }
    for (const request of batch) {
      request.resolve(
        records.filter(
          (r) =>
            r.key === request.key &&
            r.offset >= request.from &&
            (request.to === undefined || r.offset <= request.to),
        ),
      );
    }
  }
}
