/** What a worker reports about its work, for progress displays, tests and metrics. */
import type { RunRecord } from '@baton/core/adapter';
import type { RunMessage } from '@baton/core/runtime';
import { ATTR, startRunSpan, type WorkerInstruments } from '@baton/telemetry';
import { isSpanContextValid, type Context, type Span } from '@opentelemetry/api';

/**
 * Passed to `onEvent` with every event a claimed run reports (its claim, its end, a lost lease, a
 * dead letter of its own): the run's workflow and the ids of its `baton.run` span when tracing is
 * on, so an observer can log the event with the run's trace.
 */
/**
 * How a run session ended. `held`: the run's data cannot be read by this worker yet (a key it
 * lacks, a checkpoint schema newer than it knows); the run is left intact, suspended with a retry
 * timer. `paused`: the run stopped for a pause request (`client.runs.pause`) and holds no lease until it
 * is resumed. Defined here, with the events a session's end emits, so that the options (which name the
 * event sink) never import the session.
 */
export type SessionEnd =
  'completed' | 'failed' | 'cancelled' | 'suspended' | 'paused' | 'handed-off' | 'aborted' | 'held';

export interface RunEventContext {
  workflow: string;
  traceId?: string;
  spanId?: string;
}

export type WorkerEvent =
  | {
      type: 'run-claimed';
      runId: string;
      epoch: number;
      via: RunMessage['kind'];
      reason?: string;
      since?: number;
    }
  | { type: 'run-completed'; runId: string; epoch: number }
  | { type: 'run-failed'; runId: string; epoch: number; error: string }
  | { type: 'run-cancelled'; runId: string; epoch: number }
  | { type: 'run-suspended'; runId: string; epoch: number }
  /** The run stopped for a pause request; nobody runs it until `client.runs.resume`. */
  | { type: 'run-paused'; runId: string; epoch: number }
  | { type: 'run-handed-off'; runId: string; epoch: number }
  | { type: 'run-aborted'; runId: string; epoch: number; reason: string }
  /** The run's data names a key this worker lacks, or a newer checkpoint schema: left intact, retried later. */
  | { type: 'run-held'; runId: string; epoch: number; code: string; reason: string }
  /**
   * The run's resume threw on this claim and it was counted (`failures` in a row): `final` when the
   * run was failed for it, else it waits for another claim (claim-failures.ts).
   */
  | { type: 'resume-failed'; runId: string; epoch: number; failures: number; final: boolean; reason: string }
  | { type: 'lease-lost'; runId: string; epoch: number }
  | { type: 'activity-heartbeat'; runId: string; seq: number; details: unknown }
  | { type: 'leases-reaped'; runIds: string[]; cause: 'expired' | 'dead-worker' }
  | { type: 'timers-due'; runIds: string[] }
  /** The retention sweep deleted these finished runs (store data and journal). */
  | { type: 'runs-expired'; runIds: string[] }
  /** A schedule's due times started these runs (and `skipped` due times started none). */
  | { type: 'schedule-fired'; scheduleId: string; runIds: string[]; dueTimes: number[]; skipped: number }
  /**
   * A message of a run whose workflow version this worker lacks went back to the queue (put-back.ts):
   * `start` when nothing of the run exists yet; `toHolder` when another live worker registers the
   * version (it is then put back quickly, or passed on to another consumer on Kafka).
   */
  | {
      type: 'run-put-back';
      runId: string;
      workflow: string;
      version: number;
      start: boolean;
      toHolder: boolean;
      deliveryCount: number;
    }
  /** Dead letters `unknown-workflow` of versions this worker registers, put back on the run queue. */
  | { type: 'dead-letters-redriven'; ids: string[]; runIds: string[] }
  /** `runId` when the message named one (an unparseable message may not). */
  | { type: 'dead-lettered'; code: string; reason: string; runId?: string }
  /**
   * A payload a `ctx.waitForSignal(definition)` wait's schema refused: the wait skipped it and goes
   * on (once per execution of the run; a resume decides the same again and reports it again).
   */
  | { type: 'signal-refused'; runId: string; signal: string; signalId: string; issues: string[] }
  /** The store lost its data (a Redis restarted without persistence); these runs held here are gone. */
  | { type: 'store-data-lost'; store: string; reason: string; runIds: string[] };

/** The event that reports how a session ended; none for `held` (the session reports it, with its reason). */
export function sessionEndEvent(
  end: SessionEnd,
  runId: string,
  epoch: number,
  failure?: string,
): WorkerEvent | undefined {
  switch (end) {
    case 'completed':
      return { type: 'run-completed', runId, epoch };
    case 'failed':
      return { type: 'run-failed', runId, epoch, error: failure ?? 'unknown' };
    case 'cancelled':
      return { type: 'run-cancelled', runId, epoch };
    case 'suspended':
      return { type: 'run-suspended', runId, epoch };
    case 'paused':
      return { type: 'run-paused', runId, epoch };
    case 'handed-off':
      return { type: 'run-handed-off', runId, epoch };
    case 'aborted':
      return { type: 'run-aborted', runId, epoch, reason: 'stopped' };
    case 'held':
      return undefined;
  }
}

/**
 * What a claim tells the world: the `run-claimed` event, the started or resumed counter, a
 * resume's failover latency, the schedule-to-start time (enqueue or hand-off to this claim; wakes
 * carry no enqueue time and are left out), and the run's span (a child of the producer's trace when the run
 * carries one), which the caller ends when the session does.
 */
export function announceClaim(
  run: RunRecord,
  message: RunMessage,
  epoch: number,
  workerId: string,
  instruments: WorkerInstruments,
  onEvent: (event: WorkerEvent, run?: RunEventContext) => void,
): { span: Span; context: Context } {
  const reason = 'reason' in message ? message.reason : undefined;
  const since =
    message.kind === 'resume' ? message.since : message.kind === 'start' ? message.enqueuedAt : undefined;
  const resumed = epoch > 1;
  const started = startRunSpan({
    workflow: run.workflow,
    version: run.version,
    runId: run.runId,
    epoch,
    resumed,
    via: reason === undefined ? message.kind : `${message.kind}:${reason}`,
    workerId,
    traceparent: run.traceparent,
  });
  onEvent(
    { type: 'run-claimed', runId: run.runId, epoch, via: message.kind, reason, since },
    runEventContext(run, started.span),
  );
  if (resumed) instruments.runsResumed.add(1, { [ATTR.reason]: reason ?? message.kind });
  else instruments.runsStarted.add(1, { [ATTR.workflow]: run.workflow });
  if (message.kind === 'resume') {
    const latency = Math.max(0, Date.now() - message.since) / 1000;
    instruments.failoverLatency.record(latency, { [ATTR.reason]: message.reason });
  }
  // Both times are the producer's or the previous owner's clock against this worker's: skew
  // between machines shows up here as it does in the failover latency.
  if (since !== undefined) {
    instruments.scheduleToStart.record(Math.max(0, Date.now() - since) / 1000, {
      [ATTR.workflow]: run.workflow,
      [ATTR.via]: message.kind,
    });
  }
  return started;
}

/** The workflow and `baton.run` span ids of a run, for its events (the ids when the span is real). */
export function runEventContext(run: RunRecord, span: Span): RunEventContext {
  const ids = span.spanContext();
  return isSpanContextValid(ids)
    ? { workflow: run.workflow, traceId: ids.traceId, spanId: ids.spanId }
    : { workflow: run.workflow };
}
