/**
 * A run's journal as the client reads it (`client.history`, and the timeline built on it): each
 * record decoded with the client's payload protection, its large values read back from the
 * payload store and verified, as the workers read them.
 */
import type { Store, Transport } from '@baton/core/adapter';
import {
  decodeJournalRecord,
  type ClaimCheck,
  type JournalEntry,
  type PayloadCodec,
  type PositionedEntry,
  CheckpointIntegrityError,
} from '@baton/core/runtime';

export class HistoryReader {
  constructor(
    private readonly transport: Transport,
    private readonly codec: PayloadCodec,
    private readonly claimCheck: ClaimCheck | undefined,
    private readonly store: Store | undefined,
  ) {}

  /** The run's entries in journal order, each with its record's position. */
  async read(runId: string): Promise<PositionedEntry[]> {
    const records = await this.transport.journal.read(runId, 0);
    const positioned: PositionedEntry[] = [];
    for (const r of records) {
      const decoded = decodeJournalRecord(r.data, runId, this.codec, r.position);
      for (const entry of await this.resolved(runId, decoded))
        positioned.push({ position: r.position, entry });
    }
    return positioned;
  }

  /**
   * Entries with their large values read back. A run deleted from the store (retention, delete)
   * whose journal the bus still keeps (Kafka until `retention.ms`) has no payloads left: its
   * entries keep their references.
   */
  private async resolved(runId: string, entries: JournalEntry[]): Promise<JournalEntry[]> {
    if (this.claimCheck === undefined) return entries;
    try {
      return await this.claimCheck.resolveEntries(runId, entries);
    } catch (err) {
      const deleted =
        err instanceof CheckpointIntegrityError &&
        this.store !== undefined &&
        !(await this.store.runs.get(runId));
      if (deleted) return entries;
      throw err;
    }
  }
}
