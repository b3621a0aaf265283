/**
 * Deleting a finished run from both places it lives: the store (record, checkpoints, lease,
 * signals, idempotency key) and the bus (its journal). Shared by `client.delete` and the worker's
 * retention sweep (docs/retention.md).
 *
 * Invariant: the store's delete comes first and is the only gate. It checks, atomically, that the
 * run is finished; only after it succeeded is the journal purged, so a run reopened or still
 * going never loses a record. A crash between the two leaves the journal to the bus's own limits.
 */
import type { Store } from './contracts/store.js';
import type { Transport } from './contracts/transport.js';

/** What {@link deleteFinishedRun} removed. */
export interface RunDeletion {
  runId: string;
  /** `purged`: the journal is gone; `retention`: the bus keeps it until its retention (Kafka). */
  journal: 'purged' | 'retention';
}

/**
 * Deletes a finished run's store data, then purges its journal. Undefined when the store does not
 * know the run (nothing is purged then); RunStateError, naming the status, when it is not finished.
 */
export async function deleteFinishedRun(
  store: Store,
  transport: Transport,
  runId: string,
): Promise<RunDeletion | undefined> {
  if (!(await store.deleteRun(runId))) return undefined;
  await transport.purgeJournal(runId);
  return { runId, journal: transport.journalPurge === 'deletes' ? 'purged' : 'retention' };
}
