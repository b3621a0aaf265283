/**
 * The in-process transport's journal: each run's records, with optimistic append.
 *
 * Invariant: positions come from one counter shared by all runs (like a JetStream stream
 * sequence): strictly increasing per run, never contiguous by promise.
 */
import type { JournalAppend, JournalLog, JournalRecord } from '../adapter/contracts/transport.js';
import { JournalConflictError } from '../adapter/errors.js';

export class MemoryJournal implements JournalLog {
  readonly supportsOptimisticAppend = true;
  readonly purgeMode = 'deletes';
  private readonly journals = new Map<string, JournalRecord[]>();
  private lastPosition = 0;

  async append(append: JournalAppend): Promise<number> {
    const records = this.journals.get(append.runId) ?? [];
    const actualLast = records.at(-1)?.position ?? 0;
    if (append.expectedLastPosition !== undefined && append.expectedLastPosition !== actualLast) {
      throw new JournalConflictError(append.runId, append.expectedLastPosition, actualLast);
    }
    this.lastPosition += 1;
    // Buffer.from copies like new Uint8Array, from Node's pool for small records (no
    // ArrayBuffer of its own each); reads hand out Uint8Array copies as before.
    records.push({ position: this.lastPosition, data: Buffer.from(append.data) });
    this.journals.set(append.runId, records);
    return this.lastPosition;
  }

  async read(runId: string, afterPosition: number, uptoPosition?: number): Promise<JournalRecord[]> {
    const records = this.journals.get(runId) ?? [];
    return records
      .filter((r) => r.position > afterPosition && (uptoPosition === undefined || r.position <= uptoPosition))
      .map((r) => ({ position: r.position, data: new Uint8Array(r.data) }));
  }

  async purge(runId: string): Promise<void> {
    this.journals.delete(runId);
  }
}
