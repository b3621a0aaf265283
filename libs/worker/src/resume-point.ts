/**
 * Where a claimed run resumes from when its newest checkpoint cannot be read (docs/integrity.md,
 * "A checkpoint the store cannot read"). The journal is the source of truth and a checkpoint only
 * a cache of it, so an older checkpoint does as well as the newest: the session reads the journal
 * after the older one's `journalPosition` and replays what came after it, exactly as it replays
 * the tail after the newest one. In order:
 *
 * 1. the newest checkpoint, as always;
 * 2. if the store raises CheckpointUnreadableError for it: the newest older kept checkpoint that
 *    reads (by seq, from the checkpoint list);
 * 3. if none reads: the journal from its start, but only when it can be shown to still hold the
 *    whole history (see {@link checkJournalFromStart}); a run forked from another (its history
 *    starts in a checkpoint, not in its own journal) and a bus that keeps one shared log (Kafka:
 *    a read from the start would scan other runs' records, and its retention may have trimmed
 *    them) never resume from the journal;
 * 4. else the run fails once with the CheckpointUnreadableError (unreadable-run.ts), which names
 *    the run and the checkpoint.
 *
 * Invariant: nothing here writes. A fallback is decided from reads only, so a worker that dies in
 * the middle leaves the run as it found it.
 */
import {
  CheckpointUnreadableError,
  type Checkpoint,
  type CheckpointSummary,
  type JournalEntry,
  type RunRecord,
} from '@baton/core';
import type { ResolvedWorkerOptions } from './options.js';

export interface ResumePoint {
  /** The checkpoint to resume from; undefined for none (a new run, or the journal from its start). */
  stored: Checkpoint | undefined;
  /**
   * The highest seq among the run's checkpoints, readable or not: the session numbers its next
   * checkpoint above it, so a checkpoint written after a fallback is the newest again.
   */
  lastSeq: number;
  /**
   * Set when the newest checkpoint could not be read and no older one could either: the session
   * resumes from the journal's start only if its records pass this check, which throws the
   * unreadable checkpoint's error when they do not.
   */
  journalCheck?: (records: readonly { position: number; entry: JournalEntry }[]) => void;
}

/** The newest readable resume point of `run` (see the module doc). */
export async function loadResumePoint(run: RunRecord, options: ResolvedWorkerOptions): Promise<ResumePoint> {
  const { store, transport, logger } = options;
  const { runId } = run;
  let unreadable: CheckpointUnreadableError;
  try {
    const stored = await store.loadCheckpoint(runId);
    return { stored, lastSeq: stored?.seq ?? 0 };
  } catch (err) {
    if (!(err instanceof CheckpointUnreadableError)) throw err;
    unreadable = err;
  }
  // The list is read apart from the bodies (a column, a parallel list), so it usually survives a
  // damaged body. If it does not, there is nothing to fall back on that can be trusted.
  let summaries: CheckpointSummary[];
  try {
    summaries = await store.listCheckpoints(runId);
  } catch (err) {
    if (err instanceof CheckpointUnreadableError) throw unreadable;
    throw err;
  }
  const lastSeq = Math.max(0, ...summaries.map((s) => s.seq));
  const badSeq = unreadable.seq ?? summaries.at(-1)?.seq;
  const what = badSeq === undefined ? 'its newest checkpoint' : `checkpoint ${badSeq}`;
  // Newest first; a seq at or above the unreadable one was written before it under an older
  // epoch or is that very checkpoint, and is skipped.
  for (const summary of [...summaries].reverse()) {
    if (badSeq !== undefined && summary.seq >= badSeq) continue;
    let older: Checkpoint | undefined;
    try {
      older = await store.loadCheckpoint(runId, summary.seq);
    } catch (err) {
      if (err instanceof CheckpointUnreadableError) continue;
      throw err;
    }
    if (older === undefined) continue;
    logger.warn(
      {
        runId,
        code: unreadable.code,
        unreadableCheckpoint: badSeq,
        resumedFromCheckpoint: older.seq,
        journalPosition: older.journalPosition,
        reason: unreadable.message,
      },
      `run ${runId}: ${what} cannot be read; resuming from checkpoint ${older.seq} and the journal after it`,
    );
    return { stored: older, lastSeq };
  }
  if (transport.scansSharedLog || run.forkedFrom !== undefined || summaries.some((s) => s.epoch === 0))
    throw unreadable;
  // The journal must reach as far as the newest checkpoint did: its record at that position is
  // the proof that nothing the checkpoint covered was trimmed from the end.
  const required = Math.max(0, ...summaries.map((s) => s.journalPosition));
  return {
    stored: undefined,
    lastSeq,
    journalCheck: (records) => {
      checkJournalFromStart(records, required, unreadable);
      logger.warn(
        {
          runId,
          code: unreadable.code,
          unreadableCheckpoint: badSeq,
          resumedFrom: 'journal',
          reason: unreadable.message,
        },
        `run ${runId}: ${what} cannot be read, nor any older one; resuming from the journal's start`,
      );
    },
  };
}

/**
 * Throws `unreadable` unless `records` (the run's journal read from position 0, decoded) hold the
 * whole history: not empty, starting with an entry of epoch 1 (the first owner's: a journal
 * trimmed at the front starts later), and with a record at `required`, the newest checkpoint's
 * position (a journal purged or trimmed at the end lacks it). When protection is on, the hash
 * chain checks the rest from the run's genesis hash. When in doubt, the run is not resumed.
 */
export function checkJournalFromStart(
  records: readonly { position: number; entry: JournalEntry }[],
  required: number,
  unreadable: CheckpointUnreadableError,
): void {
  const first = records[0];
  const reaches = required === 0 || records.some((r) => r.position === required);
  if (first === undefined || first.entry.epoch !== 1 || !reaches) throw unreadable;
}
