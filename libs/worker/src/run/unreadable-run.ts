/**
 * What a session does with a run whose checkpoint or journal it cannot read, decided once for
 * every claim path (docs/integrity.md, "What the worker does when a check fails"):
 *
 * - a key this worker lacks (MissingKeyError), or a checkpoint schema newer than it knows
 *   (CheckpointSchemaError): bad input an operator can fix, with nothing wrong in the data. The
 *   run is left intact: suspended with a timer `unreadableRetryMs` ahead (the claim already acked
 *   the run message, so the store's timer stands in for a delayed redelivery), and an error log
 *   names the key id or the version. Nothing is written to its journal or checkpoints.
 * - tampered, truncated or undecodable data (CheckpointIntegrityError, CodecError): retrying
 *   cannot help and resuming would trust bad data, so the run is marked failed with the error,
 *   which names the run and the entry. No new checkpoint is written (the last one stays, as
 *   evidence), and a dead letter names the run.
 * - a checkpoint the store cannot read at all (CheckpointUnreadableError: not JSON, or the wrong
 *   shape) reaches this only after recovery.ts found no older checkpoint that reads and no
 *   journal that still holds the run's history: it fails the run like the case above, with the
 *   dead letter code `unreadable-checkpoint`.
 *
 * A run that ends here (failed, or cancelled while held) sends a parent waiting for it its end
 * first, as a session's finish does (core's child-workflows.ts invariant 3).
 *
 * Anything else (a store or bus failure) is rethrown: the run resumes elsewhere as after any error.
 */
import { CheckpointUnreadableError, CodecError } from '@baton/core';
import type { RunOutcome } from '@baton/core/adapter';
import {
  sealOutcome,
  serializeError,
  CheckpointIntegrityError,
  CheckpointSchemaError,
  MissingKeyError,
} from '@baton/core/runtime';
import { ATTR, type WorkerInstruments } from '@baton/telemetry';
import type { ResolvedWorkerOptions } from '../options.js';
import { reportEndToParentOf } from './run-links.js';

/** What failing or holding an unreadable run uses of the worker's options. */
export type UnreadableRunOptions = Pick<
  ResolvedWorkerOptions,
  'store' | 'transport' | 'logger' | 'onEvent' | 'payloadProtection' | 'claimCheck' | 'unreadableRetryMs'
>;

export interface UnreadableRunContext {
  runId: string;
  epoch: number;
  options: UnreadableRunOptions;
  instruments: WorkerInstruments;
  /** Stops renewing the lease (the store releases it when the run is suspended or finished). */
  releaseLease(): void;
  /** The store's time as the worker estimates it: the retry timer is compared on the store's clock. */
  storeNow(): number;
}

/** Fails or holds the run; rethrows errors that are not about the data. */
export async function handleUnreadableRun(
  err: unknown,
  ctx: UnreadableRunContext,
): Promise<'failed' | 'held' | 'cancelled'> {
  if (err instanceof MissingKeyError || err instanceof CheckpointSchemaError) return holdRun(err, ctx);
  if (err instanceof CheckpointIntegrityError || err instanceof CodecError) return failRun(err, ctx);
  throw err;
}

async function failRun(
  err: CheckpointIntegrityError | CodecError,
  ctx: UnreadableRunContext,
): Promise<'failed'> {
  const { runId, epoch, options, instruments } = ctx;
  const { logger, transport, store } = options;
  const code =
    err instanceof CheckpointUnreadableError
      ? 'unreadable-checkpoint'
      : err instanceof CheckpointIntegrityError
        ? 'integrity'
        : 'unreadable';
  const reason = err.message.startsWith(`run ${runId}`) ? err.message : `run ${runId}: ${err.message}`;
  logger.warn(
    { runId, epoch, code: err.code, reason },
    'run data failed verification; the run is marked failed and not resumed from it',
  );
  await transport.deadLetters
    .add({
      data: new TextEncoder().encode(
        JSON.stringify({ runId, entry: err instanceof CheckpointIntegrityError ? err.entry : undefined }),
      ),
      headers: { 'baton-run-id': runId },
      code,
      reason,
      at: Date.now(),
    })
    .catch((dlqErr: unknown) => logger.warn({ err: dlqErr, runId }, 'dead-lettering failed'));
  instruments.deadLetters.add(1, { [ATTR.code]: code });
  options.onEvent({ type: 'dead-lettered', code, reason, runId });
  const outcome: RunOutcome = { status: 'failed', error: serializeError(err) };
  await reportEndToParentOf(options, runId, outcome);
  ctx.releaseLease();
  await store.runs.finish(runId, epoch, sealOutcome(outcome, runId, options.payloadProtection));
  return 'failed';
}

async function holdRun(
  err: MissingKeyError | CheckpointSchemaError,
  ctx: UnreadableRunContext,
): Promise<'held' | 'cancelled'> {
  const { runId, epoch, options } = ctx;
  const { logger, store, unreadableRetryMs } = options;
  const what =
    err instanceof MissingKeyError
      ? { keyId: err.keyId, keyPurpose: err.purpose, entry: err.entry }
      : { schemaVersion: err.schemaVersion, supportedVersion: err.supportedVersion };
  logger.error(
    { runId, epoch, code: err.code, ...what, retryInMs: unreadableRetryMs },
    `run left intact: ${err.message}`,
  );
  ctx.releaseLease();
  const result = await store.leases.suspend({
    runId,
    epoch,
    wakeAt: ctx.storeNow() + unreadableRetryMs,
    signals: [],
    consumedSignalIds: [],
  });
  if (result.ok) {
    // Told once the hold is in the store, so whoever hears it finds the run suspended.
    options.onEvent({ type: 'run-held', runId, epoch, code: err.code, reason: err.message });
    return 'held';
  }
  // A cancel is pending: honouring it needs none of the unreadable data.
  const cancelled: RunOutcome = {
    status: 'cancelled',
    error: { name: 'CancelledError', message: 'cancelled while its data could not be read' },
  };
  await reportEndToParentOf(options, runId, cancelled);
  await store.runs.finish(runId, epoch, sealOutcome(cancelled, runId, options.payloadProtection));
  return 'cancelled';
}
