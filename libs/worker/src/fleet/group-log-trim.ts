/**
 * Retention of group logs (group commit across runs, contracts/group-journal.ts): removes the
 * group records no run the store still keeps needs. A run's journal lives as long as the run (its
 * history, fork and retry read it after it finished), so a record goes once every run that points
 * into it was deleted (`client.runs.delete`, the retention sweep).
 *
 * One pass asks the store, for every group log it knows, the oldest record a kept run's pointer
 * names, and trims the log before it; a log nothing names any more is trimmed up to its newest
 * recorded record and forgotten (a worker that appends to it again makes it known again).
 *
 * Invariants:
 * 1. Nothing a kept run names is trimmed: the floor is the lowest record the store's pointers name,
 *    read before the trim, and pointers only ever name records newer than that (a log's records
 *    grow, and a run's first pointer into a log is its lowest there).
 * 2. A record whose pointers are still on their way (a flush between its record and its store call)
 *    is newer than every recorded one of its log, so no floor reaches it.
 * 3. A pass changes nothing a worker reads when it fails halfway: each log is trimmed on its own,
 *    and the next pass starts over from the store's answer.
 *
 * Left out: a record whose flush failed after it landed on the bus and which no pointer ever
 * named, newer than its log's last recorded record, stays until the bus's own limits (a worker
 * that died mid-flush leaves at most one such record).
 */
import type { GroupLog, GroupLogUse, JournalIndex } from '@baton/core/adapter';

/** What one pass did. */
export interface GroupLogTrimPass {
  /** Logs the store knows. */
  logs: number;
  /** Logs whose floor moved since this trimmer's last pass, so were trimmed. */
  trimmed: number;
  /** Logs no kept run names any more, trimmed to their end and forgotten. */
  forgotten: number;
}

/** Trims group logs to what kept runs need; remembers each log's last floor so an idle log costs nothing. */
export class GroupLogTrimmer {
  /** The floor each log was last trimmed to by this trimmer. */
  private readonly floors = new Map<string, number>();

  constructor(
    private readonly groupLog: GroupLog,
    private readonly index: JournalIndex,
  ) {}

  /** One pass over every log the store knows. */
  async pass(): Promise<GroupLogTrimPass> {
    const uses = await this.index.groupLogUse();
    const result: GroupLogTrimPass = { logs: uses.length, trimmed: 0, forgotten: 0 };
    const known = new Set<string>();
    for (const use of uses) {
      known.add(use.log);
      if (await this.trim(use)) result.trimmed++;
      if (use.oldestNeeded === undefined && (await this.index.forgetGroupLog(use.log, use.newestRecorded))) {
        this.floors.delete(use.log);
        result.forgotten++;
      }
    }
    for (const log of this.floors.keys()) if (!known.has(log)) this.floors.delete(log);
    return result;
  }

  private async trim({ log, oldestNeeded, newestRecorded }: GroupLogUse): Promise<boolean> {
    const floor = oldestNeeded ?? newestRecorded + 1;
    if ((this.floors.get(log) ?? 0) >= floor) return false;
    await this.groupLog.trimGroupLog(log, floor);
    this.floors.set(log, floor);
    return true;
  }
}
