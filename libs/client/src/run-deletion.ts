/**
 * Deleting a finished run from the places it lives: the store (record, checkpoints, lease,
 * signals, idempotency key, large payloads), a payload store apart from it (the NATS object
 * store), and the bus (its journal): `client.runs.delete` (docs/retention.md). The worker's
 * retention sweep deletes in batches in the same order (its fleet/maintenance.ts).
 *
 * Invariant: the store's delete comes first and is the only gate. It checks, atomically, that the
 * run is finished; only after it succeeded are its payloads and journal deleted, so a run reopened
 * or still going never loses a record. A crash in between leaves the journal to the bus's own
 * limits, and payloads in a separate payload store behind (never a run without its payloads).
 */
import type { PayloadStore, Store, Transport } from '@baton/core/adapter';

/** What {@link deleteFinishedRun} removed. */
export interface RunDeletion {
  runId: string;
  /** `purged`: the journal is gone; `retention`: the bus keeps it until its retention (Kafka). */
  journal: 'purged' | 'retention';
}

/**
 * Deletes a finished run's store data, then purges its journal and its run streams. Undefined when the store does not
 * know the run (nothing is purged then); RunStateError, naming the status, when it is not finished.
 */
export async function deleteFinishedRun(
  store: Store,
  transport: Transport,
  runId: string,
  /** A payload store apart from `store`, whose payloads of the run go too. */
  payloads?: PayloadStore,
): Promise<RunDeletion | undefined> {
  if (!(await store.retention.delete(runId))) return undefined;
  if (payloads !== undefined && payloads !== store.payloads) await payloads.delete([runId]);
  await transport.journal.purge(runId);
  await transport.runStreams?.purge(runId);
  return { runId, journal: transport.journal.purgeMode === 'deletes' ? 'purged' : 'retention' };
}
