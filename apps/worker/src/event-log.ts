/**
 * How the worker process logs a Worker's events. At warn: a lease lost and a run failed; the rest
 * at debug. A dead letter is not logged here: the worker logs each one itself, once, with its run
 * id when the message has one. Events of a claimed run come with its workflow and trace ids, which
 * go into the line under the names the worker's own run lines use (`workflow`, `trace_id`,
 * `span_id`), so every line about a run is found by them.
 */
import type { Logger } from 'pino';
import type { RunEventContext, WorkerEvent } from '@baton/worker';

export function logEvent(logger: Logger, event: WorkerEvent, run: RunEventContext | undefined): void {
  const fields = logFields(event, run);
  switch (event.type) {
    case 'lease-lost':
      return logger.warn(fields, 'lease lost: this worker stops the run; its new owner continues it');
    case 'run-failed':
      return logger.warn(fields, 'run failed');
    default:
      return logger.debug(fields, event.type);
  }
}

function logFields(event: WorkerEvent, run: RunEventContext | undefined): object {
  if (run === undefined) return event;
  const { workflow, traceId, spanId } = run;
  return traceId === undefined
    ? { ...event, workflow }
    : { ...event, workflow, trace_id: traceId, span_id: spanId };
}
