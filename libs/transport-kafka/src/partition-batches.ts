/**
 * Requests coalesced per partition: requests for a partition that arrive while a scan of it is in
 * flight wait, and the next scan serves all of them at once. One scan per partition at a time;
 * scans of different partitions run side by side. Journal tail reads (tail-reads.ts) and group
 * record reads (group-reads.ts) both queue through it, so a dead worker's runs, resumed together,
 * cost one pass per partition rather than one each.
 */
export class PartitionBatches<R> {
  private readonly waiting = new Map<number, R[]>();
  private readonly scanning = new Set<number>();

  /** `scan` serves a batch: it settles every request in it, and must not throw. */
  constructor(private readonly scan: (partition: number, batch: R[]) => Promise<void>) {}

  /** Queues `request` for `partition`'s next scan, starting one if none is in flight. */
  add(partition: number, request: R): void {
    let queue = this.waiting.get(partition);
    if (queue === undefined) this.waiting.set(partition, (queue = []));
    queue.push(request);
    if (!this.scanning.has(partition)) void this.drain(partition);
  }

  private async drain(partition: number): Promise<void> {
    this.scanning.add(partition);
    try {
      for (;;) {
        const batch = this.waiting.get(partition);
        if (batch === undefined || batch.length === 0) return;
        this.waiting.delete(partition);
        await this.scan(partition, batch);
      }
    } finally {
      this.scanning.delete(partition);
    }
  }
}
