/**
 * Finding a run in the store, and the error for one it does not know, shared by the root client
 * (`result`, `describe`) and the sub-clients that act on a run (`timeTravel`, `runs`).
 */
import { NotFoundError } from '@baton/core';
import { assertRunId, type RunRecord, type Store, type Transport } from '@baton/core/adapter';
import { RunLostError } from './result-errors.js';

/** The run's record; the error of {@link notKnownError} when the store does not know it. */
export async function requireRun(
  store: Store,
  transport: Transport,
  runId: string,
  method: string,
): Promise<RunRecord> {
  assertRunId(runId);
  const run = await store.runs.get(runId);
  if (!run) throw await notKnownError(store, transport, runId, `client.${method}(${runId}): `);
  return run;
}

/**
 * The error for a run the store does not know: RunLostError when something shows it existed
 * (`evidence` from the caller, or its journal on a bus whose per-run read is cheap), else
 * NotFoundError, which names a data loss the store recorded since a run started before it is
 * gone too. A run the retention sweep deleted (its tombstone lives) is plainly not found.
 */
export async function notKnownError(
  store: Store,
  transport: Transport,
  runId: string,
  context: string,
  evidence?: string,
): Promise<NotFoundError> {
  const plain = `${context}run ${runId} is not known to the store (not started, or not yet picked up)`;
  if ((await store.retention.tombstone(runId)) !== undefined)
    return new NotFoundError(`${plain}: it was deleted`);
  const loss = await store.lastDataLoss?.().catch(() => undefined);
  if (evidence !== undefined) return new RunLostError(runId, evidence, loss);
  const records = await journalRecords(transport, runId);
  if (records > 0) return new RunLostError(runId, `its journal on the bus holds ${records} record(s)`, loss);
  if (loss === undefined) return new NotFoundError(plain);
  return new NotFoundError(
    `${plain}; note that the store lost its data at ${new Date(loss.at).toISOString()} (${loss.reason}): ` +
      'a run started before then is gone from it; start it again from its producer with the same idempotency key',
  );
}

/**
 * How many journal records the bus holds for the run on its own subject or stream; 0 on a bus
 * where that read scans a log every run shares (Kafka), and when the read fails (this is only
 * evidence for an error message). Runs journaled through group records have none of their own.
 */
async function journalRecords(transport: Transport, runId: string): Promise<number> {
  if (transport.journal.scansSharedLog === true) return 0;
  try {
    return (await transport.journal.read(runId, 0)).length;
  } catch {
    return 0;
  }
}
