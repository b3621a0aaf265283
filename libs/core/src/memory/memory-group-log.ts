/**
 * The in-process transport's group logs (contracts/group-journal.ts): one array of records per
 * log, positions counted per log from 1. Bytes are copied on the way in and out.
 */
import { checkGroupLogName, type GroupLog } from '../adapter/contracts/group-journal.js';

interface StoredGroupRecord {
  position: number;
  data: Uint8Array;
}

export class MemoryGroupLog implements GroupLog {
  private readonly logs = new Map<string, { next: number; records: StoredGroupRecord[] }>();

  constructor(private readonly assertOpen: (operation: string) => void) {}

  async appendGroupRecord(log: string, data: Uint8Array): Promise<number> {
    this.assertOpen('appendGroupRecord');
    checkGroupLogName(log);
    const stored = this.logs.get(log) ?? { next: 1, records: [] };
    const position = stored.next++;
    stored.records.push({ position, data: new Uint8Array(data) });
    this.logs.set(log, stored);
    return position;
  }

  async readGroupRecords(log: string, positions: readonly number[]): Promise<Map<number, Uint8Array>> {
    this.assertOpen('readGroupRecords');
    checkGroupLogName(log);
    const wanted = new Set(positions);
    const found = new Map<number, Uint8Array>();
    for (const record of this.logs.get(log)?.records ?? []) {
      if (wanted.has(record.position)) found.set(record.position, new Uint8Array(record.data));
    }
    return found;
  }

  async trimGroupLog(log: string, beforePosition: number): Promise<void> {
    this.assertOpen('trimGroupLog');
    checkGroupLogName(log);
    const stored = this.logs.get(log);
    if (stored !== undefined) stored.records = stored.records.filter((r) => r.position >= beforePosition);
  }
}
