/**
 * Recovery: everything a claimed run's session does before it replays, returning the run's
 * verified history. In order:
 *
 * 1. The resume point: the run's newest checkpoint, or, when that cannot be read, an older one or
 *    the journal from its start, chosen by `findHistoryStart` in @baton/core (the rules are there,
 *    shared with the client's fork and retry; docs/integrity.md, "A checkpoint the store cannot
 *    read"). What is the worker's own: a run forked from another and a bus that keeps one shared
 *    log (Kafka: a read from the start would scan other runs' records, and its retention may have
 *    trimmed them) never resume from the journal's start, and every fallback is logged.
 * 2. The first-owner decision: the first owner of a run without a checkpoint needs no fence marker
 *    of its own and no read. No epoch came before it, so its journal is empty and nothing can be
 *    stale; its first append expects an empty journal (position 0), which fences it off from any
 *    later owner's marker just the same. That saves an append and a read per new run. Its
 *    `LeaseAcquired` (which names the worker) rides at the head of its first record instead
 *    (`leadEntry`, journal-writer.ts), so every owner of every run is named in the journal at no
 *    extra round trip. On a shared log
 *    the marker stays: its position anchors the run's first checkpoint, so a later tail read
 *    starts near its entries. With the hash chain on, such a first owner starts from the chain's
 *    genesis hash.
 * 3. The fence marker (every other owner): `LeaseAcquired` appended before anything is read, so
 *    every entry of an older owner that lands after it is recognisably stale.
 * 4. The known tail: what the session already knows of the journal after its start (nothing for a
 *    first owner, only its own marker for an epoch-1 owner that had to write one), so the read is
 *    skipped; else the journal is read up to the marker.
 * 5. The history, verified before anything is replayed (run-history.ts in @baton/core): a
 *    tampered, truncated or undecryptable checkpoint or record raises, and the run never executes
 *    from it; and the run's input, opened from the run record.
 *
 * Invariant: nothing but the fence marker is written here, and it is written before any read. A
 * fallback is decided from reads only, so a worker that dies in the middle leaves the run as it
 * found it.
 */
import { CheckpointUnreadableError } from '@baton/core';
import type { RunRecord } from '@baton/core/adapter';
import {
  encodeJournalRecord,
  findHistoryStart,
  openValue,
  readRunHistory,
  type HistoryFallback,
  type HistoryStart,
  type JournalEntry,
  type RunHistory,
} from '@baton/core/runtime';
import type { WorkerInstruments } from '@baton/telemetry';
import type { ResolvedWorkerOptions } from '../options.js';

/** What recovery uses of the worker's options. */
export type RecoveryOptions = Pick<
  ResolvedWorkerOptions,
  'transport' | 'store' | 'payloadProtection' | 'claimCheck' | 'workerId' | 'logger'
>;

/** The run a session recovers, under the epoch it holds. */
export interface RecoveryTarget {
  run: RunRecord;
  epoch: number;
  /** The run was created by the message the session claimed, at epoch 1: no checkpoint exists. */
  fresh: boolean;
}

/** A run ready to replay. */
export interface RecoveredRun {
  history: RunHistory;
  /** Where the session's own fence marker is in the journal (0 for a first owner, who wrote none). */
  markerPosition: number;
  /** A first owner's `LeaseAcquired`, for the head of its first record (invariant 2). */
  leadEntry?: JournalEntry;
  /** The run's input, opened from the run record (sealed there when the fleet seals values). */
  input: unknown;
}

/**
 * Recovers `target` (see the module doc). `{ unreadable }` when the run has no readable history
 * or input (the session decides: a store or bus failure is retried, damage fails or holds the
 * run); a failure of the marker's append or of the store while finding the resume point throws.
 */
export async function recoverRun(
  options: RecoveryOptions,
  target: RecoveryTarget,
  now: () => number,
  instruments: Pick<WorkerInstruments, 'journalAppendDuration'>,
): Promise<RecoveredRun | { unreadable: unknown }> {
  const { transport, store, payloadProtection } = options;
  const { run, epoch } = target;
  const { runId } = run;
  const firstPoint = epoch === 1 && !target.fresh ? await resumePoint(run, options) : undefined;
  if (firstPoint instanceof CheckpointUnreadableError) return { unreadable: firstPoint };
  const firstOwner =
    epoch === 1 &&
    firstPoint?.stored === undefined &&
    firstPoint?.journalCheck === undefined &&
    transport.journal.supportsOptimisticAppend &&
    !transport.journal.scansSharedLog;
  let markerPosition = 0;
  let markerData: Uint8Array | undefined;
  if (!firstOwner) {
    const marker: JournalEntry = { type: 'LeaseAcquired', epoch, at: now(), workerId: options.workerId };
    // Unlinked: the marker is written before the read, so it cannot know the chain head. It is
    // hashed into the chain all the same, and the next entry this owner appends links to it.
    markerData = encodeJournalRecord([marker], runId, payloadProtection.codec);
    const appendStarted = performance.now();
    markerPosition = await transport.journal.append({ runId, data: markerData });
    instruments.journalAppendDuration.record((performance.now() - appendStarted) / 1000);
  }
  const point = epoch === 1 ? firstPoint : await resumePoint(run, options);
  if (point instanceof CheckpointUnreadableError) return { unreadable: point };
  const knownTail = firstOwner
    ? []
    : epoch === 1 && !point?.stored && markerData !== undefined && point?.journalCheck === undefined
      ? [{ position: markerPosition, data: markerData }]
      : undefined;
  try {
    const history = await readRunHistory({
      store: store.checkpoints,
      runId,
      journal: transport.journal,
      protection: payloadProtection,
      start: point ?? { stored: undefined, lastSeq: 0 },
      upto: markerPosition,
      tail: knownTail,
      claimCheck: options.claimCheck,
    });
    const input = openValue(run.input, runId, 'run input', payloadProtection);
    const leadEntry: JournalEntry | undefined = firstOwner
      ? { type: 'LeaseAcquired', epoch, at: now(), workerId: options.workerId }
      : undefined;
    return { history, markerPosition, input, ...(leadEntry !== undefined && { leadEntry }) };
  } catch (err) {
    return { unreadable: err };
  }
}

/** Where `run` resumes from, or the error that says it has no readable history. */
async function resumePoint(
  run: RunRecord,
  options: RecoveryOptions,
): Promise<HistoryStart | CheckpointUnreadableError> {
  try {
    return await loadResumePoint(run, options);
  } catch (err) {
    if (err instanceof CheckpointUnreadableError) return err;
    throw err;
  }
}

/** The newest readable resume point of `run` (see the module doc, step 1). */
export function loadResumePoint(
  run: RunRecord,
  options: Pick<RecoveryOptions, 'store' | 'transport' | 'logger'>,
): Promise<HistoryStart> {
  const { store, transport, logger } = options;
  return findHistoryStart({
    store: store.checkpoints,
    runId: run.runId,
    journalFallback: transport.journal.scansSharedLog !== true && run.forkedFrom === undefined,
    onFallback: (fallback) => logFallback(fallback, logger),
  });
}

/** Says which checkpoint could not be read and what the run resumes from instead. */
function logFallback(fallback: HistoryFallback, logger: RecoveryOptions['logger']): void {
  const { runId, unreadable, unreadableSeq, resumedFrom } = fallback;
  const what = unreadableSeq === undefined ? 'its newest checkpoint' : `checkpoint ${unreadableSeq}`;
  const common = { runId, code: unreadable.code, unreadableCheckpoint: unreadableSeq };
  if (resumedFrom === 'journal') {
    logger.warn(
      { ...common, resumedFrom: 'journal', reason: unreadable.message },
      `run ${runId}: ${what} cannot be read, nor any older one; resuming from the journal's start`,
    );
    return;
  }
  logger.warn(
    {
      ...common,
      resumedFromCheckpoint: resumedFrom.seq,
      journalPosition: resumedFrom.journalPosition,
      reason: unreadable.message,
    },
    `run ${runId}: ${what} cannot be read; resuming from checkpoint ${resumedFrom.seq} and the journal after it`,
  );
}
