/**
 * Step 4 of a run's path through the worker: the claim. Takes the run's lease (or uses the one
 * `runs.createAndLease` took with a new run), acks the message only then (worker invariant 1),
 * announces the claim, runs the session and reports how it ended; a session that threw is counted
 * against the run (claim-failures.ts) so a run that cannot be resumed ends instead of looping.
 */
import type { AnyWorkflowDefinition } from '@baton/core';
import type { AcquireResult, Delivery, RunRecord } from '@baton/core/adapter';
import type { RunMessage } from '@baton/core/runtime';
import { ATTR, recordError, recordRunEnd, type WorkerInstruments } from '@baton/telemetry';
import { SpanStatusCode } from '@opentelemetry/api';
import { handleClaimFailure } from './run/claim-failures.js';
import type { DataLossWatch } from './data-loss.js';
import {
  announceClaim,
  runEventContext,
  sessionEndEvent,
  type RunEventContext,
  type SessionEnd,
  type WorkerEvent,
} from './events.js';
import { bindLogger } from './logger.js';
import type { ResolvedWorkerOptions } from './options.js';
import { RunSession, type SessionDeps } from './run/run-session.js';

/**
 * What claiming a run uses of the worker: what each session gets (its logger and events bound to
 * the run here), and what the claim itself reads and calls. Built once in worker.ts.
 */
export interface ClaimDeps
  extends
    SessionDeps,
    Pick<ResolvedWorkerOptions, 'leaseMs' | 'maxResumeFailures' | 'resumeBackoffMs' | 'resumeBackoffMaxMs'> {
  readonly dataLoss: Pick<DataLossWatch, 'noteAborted'>;
  /** The sessions running on this worker, by run id. */
  readonly sessions: Map<string, RunSession>;
  /** Whether the worker still takes new work (else a session hands its run off at once). */
  running(): boolean;
}

/** The lease `runs.createAndLease` took with the run it created, and when it was asked for. */
export interface TakenLease {
  lease: AcquireResult;
  acquiredAt: number;
}

export async function claimRun(
  deps: ClaimDeps,
  run: RunRecord,
  workflow: AnyWorkflowDefinition,
  message: RunMessage,
  delivery: Delivery,
  taken?: TakenLease,
): Promise<void> {
  const { store, leaseMs, workerId, logger, instruments, sessions } = deps;
  const acquiredAt = taken?.acquiredAt ?? Date.now();
  const lease = taken?.lease ?? (await store.leases.acquire(run.runId, workerId, leaseMs));
  if (!lease.ok) {
    // Finished, or a live worker owns it (a duplicate or early message): nothing to do here.
    await delivery.ack();
    return;
  }
  await deps.faults?.('lease-acquired', { runId: run.runId, epoch: lease.epoch });
  // The claim is durable (the lease), so the run does not wait for the ack's confirmation: a
  // lost ack only redelivers the message, and whoever gets it finds the lease taken or the run
  // finished, and acks it then.
  if (delivery.ackUnconfirmed) delivery.ackUnconfirmed();
  else
    void delivery
      .ack()
      .catch((err: unknown) =>
        logger.debug(
          { err, runId: run.runId },
          'ack of a claimed run failed; it will be redelivered and dropped',
        ),
      );
  const { span, context: traceContext } = announceClaim(
    run,
    message,
    lease.epoch,
    workerId,
    instruments,
    deps.onEvent,
  );

  // Every line and event about this run, from here and from its session, names it and its trace.
  const runContext = runEventContext(run, span);
  const runLogger = bindLogger(logger, runLogBindings(runContext, run.runId));
  const runDeps: ClaimDeps = {
    ...deps,
    logger: runLogger,
    onEvent: (event) => deps.onEvent(event, runContext),
  };
  const session = new RunSession(
    {
      run,
      workflow,
      epoch: lease.epoch,
      acquiredAt,
      // Created by this very message and never leased before: it has no checkpoint to load.
      fresh: taken !== undefined && lease.epoch === 1,
      cancelRequested: lease.cancelRequested,
      updateRequested: message.kind === 'wake' && message.reason === 'update',
      traceContext,
    },
    runDeps,
  );
  sessions.set(run.runId, session);
  instruments.runsInFlight.add(1);
  if (!deps.running()) session.handoff();
  try {
    const end = await session.run();
    span.setAttribute(ATTR.end, end);
    if (end === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: session.failure });
    if (end === 'aborted') deps.dataLoss.noteAborted(run.runId);
    reportEnd(instruments, runDeps.onEvent, end, run, lease.epoch, session.failure);
  } catch (err) {
    span.setAttribute(ATTR.end, 'aborted');
    recordError(span, err);
    deps.dataLoss.noteAborted(run.runId);
    // Counted on the run, and failed after too many in a row, unless it is not the run's fault.
    const counted = await handleClaimFailure(
      err,
      run.runId,
      lease.epoch,
      runDeps,
      instruments,
      deps.storeNow,
    ).catch((recordErr: unknown) => {
      runLogger.warn({ err: recordErr, runId: run.runId }, 'recording a failed resume failed');
      return 'not-counted' as const;
    });
    if (counted === 'failed')
      reportEnd(instruments, runDeps.onEvent, 'failed', run, lease.epoch, (err as Error)?.message);
    if (counted !== 'not-counted') return;
    runLogger.warn(
      { err, runId: run.runId, epoch: lease.epoch },
      'run stopped by an error; it resumes elsewhere',
    );
    runDeps.onEvent({
      type: 'run-aborted',
      runId: run.runId,
      epoch: lease.epoch,
      reason: (err as Error)?.message ?? String(err),
    });
  } finally {
    span.end();
    instruments.runsInFlight.add(-1);
    // A later session of the same run (this worker reclaimed it) keeps its entry.
    if (sessions.get(run.runId) === session) sessions.delete(run.runId);
  }
}

function reportEnd(
  instruments: WorkerInstruments,
  onEvent: (event: WorkerEvent) => void,
  end: SessionEnd,
  run: RunRecord,
  epoch: number,
  failure: string | undefined,
): void {
  if (end === 'completed') instruments.runsCompleted.add(1);
  if (end === 'failed') instruments.runsFailed.add(1);
  if (end === 'completed' || end === 'failed' || end === 'cancelled') recordRunEnd(instruments, run, end);
  const event = sessionEndEvent(end, run.runId, epoch, failure);
  if (event) onEvent(event);
}

/**
 * What every log line about a run carries: its id and workflow, and its span's ids under the
 * names OpenTelemetry's log data model and most log backends use (`trace_id`, `span_id`), so a
 * line leads to the trace and a trace to its lines.
 */
function runLogBindings(context: RunEventContext, runId: string): Record<string, unknown> {
  const bindings: Record<string, unknown> = { runId, workflow: context.workflow };
  if (context.traceId !== undefined) bindings.trace_id = context.traceId;
  if (context.spanId !== undefined) bindings.span_id = context.spanId;
  return bindings;
}
