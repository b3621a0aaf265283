/**
 * Where reading a run's history starts: which of its checkpoints, or the journal's start. The
 * journal is the source of truth and a checkpoint only a cache of it, so a checkpoint the store
 * cannot read is stood in for by an older one that reads (its `journalPosition` is earlier, and
 * the journal after it is replayed just the same), and, where allowed, by the journal from its
 * start (docs/integrity.md, "A checkpoint the store cannot read"). In order:
 *
 * 1. the asked-for checkpoint (by default the newest);
 * 2. if the store raises CheckpointUnreadableError for it: the newest older kept checkpoint that
 *    reads (by seq, from the checkpoint list); a checkpoint asked for by its seq has no stand-in;
 * 3. if none reads and the caller allows it: the journal from its start, but only when its records
 *    prove it still holds the whole history ({@link checkJournalFromStart}). A forked run (its
 *    history starts in a seed checkpoint of epoch 0, not in its own journal) never qualifies;
 * 4. else the CheckpointUnreadableError, which names the run and the checkpoint.
 *
 * Invariant: nothing here writes. A fallback is decided from reads only, so a reader that dies in
 * the middle leaves the run as it found it.
 */
import { NotFoundError } from '../shared/errors.js';
import { CheckpointUnreadableError } from '../adapter/errors.js';
import type { Checkpoint, CheckpointStore, CheckpointSummary } from '../adapter/contracts/checkpoints.js';
import type { PositionedEntry } from '../shared/journal.js';

/** Which checkpoint a history is read from. */
export type HistoryPoint =
  /** The newest checkpoint, loaded without listing the others first (a worker's resume). */
  | 'newest'
  /** The newest listed checkpoint (everything the run journaled, with the list at hand). */
  | 'end'
  /** Exactly this kept checkpoint (by `seq`); no stand-in when it cannot be read. */
  | { checkpoint: number }
  /** The newest checkpoint at or before this journal position, and the journal up to it. */
  | { journalPosition: number };

/** Why the history does not start from the checkpoint asked for: reported to the caller's log. */
export interface HistoryFallback {
  runId: string;
  /** The unreadable checkpoint's error. */
  unreadable: CheckpointUnreadableError;
  /** The seq of the checkpoint that could not be read, when known. */
  unreadableSeq: number | undefined;
  /** The older checkpoint read instead, or 'journal' for the journal's start. */
  resumedFrom: Checkpoint | 'journal';
}

export interface HistoryStartOptions {
  store: CheckpointStore;
  runId: string;
  /** @defaultValue 'newest' */
  at?: HistoryPoint;
  /**
   * The journal from its start may stand in when no checkpoint reads. Give false for a run forked
   * from another and for a bus that keeps one shared log (a read from the start would scan other
   * runs' records, and its retention may have trimmed them).
   * @defaultValue false
   */
  journalFallback?: boolean;
  /** Told when an older checkpoint or the journal stands in for an unreadable one. */
  onFallback?: (fallback: HistoryFallback) => void;
}

export interface HistoryStart {
  /** The checkpoint to read from (as stored, still protected); undefined for the journal's start. */
  stored: Checkpoint | undefined;
  /**
   * The highest seq among the run's checkpoints, readable or not: a writer numbers its next
   * checkpoint above it, so a checkpoint written after a fallback is the newest again.
   */
  lastSeq: number;
  /** Read the journal up to this position (inclusive); undefined for its end. */
  upto?: number;
  /**
   * Set when no checkpoint could be read and the journal's start stands in: the history is read
   * only if the decoded records pass this check, which throws the unreadable checkpoint's error
   * when they do not.
   */
  journalCheck?: (records: readonly PositionedEntry[]) => void;
}

/** Where the history of `runId` at `at` starts (see the module doc). */
export async function findHistoryStart(options: HistoryStartOptions): Promise<HistoryStart> {
  const at = options.at ?? 'newest';
  if (at === 'newest') return newestStart(options);
  return listedStart(options, at);
}

/** The newest checkpoint, read first on its own (one store call on the common path). */
async function newestStart(options: HistoryStartOptions): Promise<HistoryStart> {
  const { store, runId } = options;
  let unreadable: CheckpointUnreadableError;
  try {
    const stored = await store.load(runId);
    return { stored, lastSeq: stored?.seq ?? 0 };
  } catch (err) {
    if (!(err instanceof CheckpointUnreadableError)) throw err;
    unreadable = err;
  }
  // The list is read apart from the bodies (a column, a parallel list), so it usually survives a
  // damaged body. If it does not, there is nothing to fall back on that can be trusted.
  let summaries: CheckpointSummary[];
  try {
    summaries = await store.list(runId);
  } catch (err) {
    if (err instanceof CheckpointUnreadableError) throw unreadable;
    throw err;
  }
  return fallBack(options, summaries, unreadable.seq ?? summaries.at(-1)?.seq, unreadable, undefined);
}

/** A checkpoint chosen from the run's list: by seq, by journal position, or the last. */
async function listedStart(
  options: HistoryStartOptions,
  at: Exclude<HistoryPoint, 'newest'>,
): Promise<HistoryStart> {
  const { store, runId } = options;
  const summaries = await store.list(runId);
  const lastSeq = Math.max(0, ...summaries.map((s) => s.seq));
  let base: CheckpointSummary | undefined;
  let upto: number | undefined;
  if (at === 'end') {
    base = summaries.at(-1);
  } else if ('checkpoint' in at) {
    base = summaries.findLast((s) => s.seq === at.checkpoint);
    if (base === undefined) {
      const seqs =
        summaries.length === 0 ? 'it has none' : `it has ${summaries.map((s) => s.seq).join(', ')}`;
      throw new NotFoundError(`run ${runId} has no checkpoint ${at.checkpoint} (${seqs})`);
    }
    upto = base.journalPosition;
  } else {
    upto = at.journalPosition;
    base = summaries.findLast((s) => s.journalPosition <= at.journalPosition);
  }
  if (base === undefined) return { stored: undefined, lastSeq, upto };
  let stored: Checkpoint | undefined;
  try {
    stored = await store.load(runId, base.seq);
  } catch (err) {
    // A checkpoint asked for by its seq is the point itself: nothing else can stand in for it.
    if (!(err instanceof CheckpointUnreadableError) || (at !== 'end' && 'checkpoint' in at)) throw err;
    return fallBack(options, summaries, base.seq, err, upto);
  }
  if (stored === undefined)
    throw new NotFoundError(`run ${runId}: checkpoint ${base.seq} is listed but could not be loaded`);
  return { stored, lastSeq, upto };
}

/** An older readable checkpoint, or the journal's start, in place of an unreadable one. */
async function fallBack(
  options: HistoryStartOptions,
  summaries: readonly CheckpointSummary[],
  badSeq: number | undefined,
  unreadable: CheckpointUnreadableError,
  upto: number | undefined,
): Promise<HistoryStart> {
  const { store, runId } = options;
  const lastSeq = Math.max(0, ...summaries.map((s) => s.seq));
  // Newest first; a seq at or above the unreadable one was written before it under an older
  // epoch or is that very checkpoint, and is skipped.
  for (const summary of [...summaries].reverse()) {
    if (badSeq !== undefined && summary.seq >= badSeq) continue;
    let older: Checkpoint | undefined;
    try {
      older = await store.load(runId, summary.seq);
    } catch (err) {
      if (err instanceof CheckpointUnreadableError) continue;
      throw err;
    }
    if (older === undefined) continue;
    options.onFallback?.({ runId, unreadable, unreadableSeq: badSeq, resumedFrom: older });
    return { stored: older, lastSeq, upto };
  }
  // A seed checkpoint (epoch 0) means the history began in another run's journal.
  if (options.journalFallback !== true || summaries.some((s) => s.epoch === 0)) throw unreadable;
  // The journal must reach as far as the newest checkpoint did: its record at that position is
  // the proof that nothing the checkpoint covered was trimmed from the end.
  const required = Math.max(0, ...summaries.map((s) => s.journalPosition));
  return {
    stored: undefined,
    lastSeq,
    upto,
    journalCheck: (records) => {
      checkJournalFromStart(records, required, unreadable);
      options.onFallback?.({ runId, unreadable, unreadableSeq: badSeq, resumedFrom: 'journal' });
    },
  };
}

/**
 * Throws `unreadable` unless `records` (the run's journal read from position 0, decoded) hold the
 * whole history: not empty, starting with an entry of epoch 1 (the first owner's: a journal
 * trimmed at the front starts later), and with a record at `required`, the newest checkpoint's
 * position (a journal purged or trimmed at the end lacks it). When protection is on, the hash
 * chain checks the rest from the run's genesis hash. When in doubt, the history is not read.
 */
export function checkJournalFromStart(
  records: readonly PositionedEntry[],
  required: number,
  unreadable: CheckpointUnreadableError,
): void {
  const first = records[0];
  const reaches = required === 0 || records.some((r) => r.position === required);
  if (first === undefined || first.entry.epoch !== 1 || !reaches) throw unreadable;
}
