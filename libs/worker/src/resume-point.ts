/**
 * Where a claimed run resumes from: its newest checkpoint, or, when that cannot be read, an older
 * one or the journal from its start, chosen by `findHistoryStart` in @baton/core (the rules are
 * there, shared with the client's fork and retry; docs/integrity.md, "A checkpoint the store
 * cannot read"). What is the worker's own: a run forked from another and a bus that keeps one
 * shared log (Kafka: a read from the start would scan other runs' records, and its retention may
 * have trimmed them) never resume from the journal's start, and every fallback is logged.
 *
 * Invariant: nothing here writes. A fallback is decided from reads only, so a worker that dies in
 * the middle leaves the run as it found it.
 */
import type { RunRecord } from '@baton/core/adapter';
import { findHistoryStart, type HistoryFallback, type HistoryStart } from '@baton/core/runtime';
import type { ResolvedWorkerOptions } from './options.js';

/** The newest readable resume point of `run` (see the module doc). */
export function loadResumePoint(run: RunRecord, options: ResolvedWorkerOptions): Promise<HistoryStart> {
  const { store, transport, logger } = options;
  return findHistoryStart({
    store,
    runId: run.runId,
    journalFallback: transport.scansSharedLog !== true && run.forkedFrom === undefined,
    onFallback: (fallback) => logFallback(fallback, logger),
  });
}

/** Says which checkpoint could not be read and what the run resumes from instead. */
function logFallback(fallback: HistoryFallback, logger: ResolvedWorkerOptions['logger']): void {
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
