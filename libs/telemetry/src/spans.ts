/**
 * The three spans Baton emits. A run's trace: `baton.enqueue` (producer) -> one `baton.run` per
 * execution attempt, on whichever worker claimed it -> one `baton.activity` per activity attempt.
 * Parents are passed explicitly (the run's stored traceparent, the run span's context), so the
 * tree is right even where no context manager carries the active context across awaits.
 */
import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { ATTR, SPAN, TRACER_NAME } from './names.js';
import { contextFromTraceparent, currentTraceparent } from './trace-context.js';

const tracer = () => trace.getTracer(TRACER_NAME);

export interface RunSpanInfo {
  workflow: string;
  version: number;
  runId: string;
  epoch: number;
  resumed: boolean;
  via: string;
  workerId: string;
  /** The producer's context, from the run record. */
  traceparent?: string | null;
}

/** Starts the span of one execution attempt; the caller ends it. Returns it with its context. */
export function startRunSpan(info: RunSpanInfo): { span: Span; context: Context } {
  const parent = contextFromTraceparent(info.traceparent);
  const span = tracer().startSpan(
    SPAN.run,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        [ATTR.workflow]: info.workflow,
        [ATTR.workflowVersion]: info.version,
        [ATTR.runId]: info.runId,
        [ATTR.epoch]: info.epoch,
        [ATTR.resumed]: info.resumed,
        [ATTR.via]: info.via,
        [ATTR.workerId]: info.workerId,
      },
    },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

export interface ActivitySpanInfo {
  name: string;
  seq: number;
  attempt: number;
  idempotencyKey: string;
  runId: string;
}

/**
 * Runs one activity attempt inside its span (a child of `parent`), recording its outcome. Under a
 * run span that records nothing (tracing off, or the run not sampled) no activity span is made:
 * a parent-based sampler would drop it anyway, and it cost a span, its attributes and its status
 * on every step. The attempt still runs in `parent`, so spans the activity's own code starts stay
 * in the run's (unsampled) trace.
 */
export function withActivitySpan<T>(
  parent: Context,
  info: ActivitySpanInfo,
  attempt: () => Promise<T>,
): Promise<T> {
  // Not recording: the attempt's own promise, with no async wrapper around it.
  if (trace.getSpan(parent)?.isRecording() !== true) return attemptIn(parent, attempt);
  return withRecordingSpan(parent, info, attempt);
}

/** Runs `attempt` in `parent`; a synchronous throw becomes a rejection, as it would in an async function. */
function attemptIn<T>(parent: Context, attempt: () => Promise<T>): Promise<T> {
  try {
    return context.with(parent, attempt);
  } catch (err) {
    return Promise.reject(err as Error);
  }
}

async function withRecordingSpan<T>(
  parent: Context,
  info: ActivitySpanInfo,
  attempt: () => Promise<T>,
): Promise<T> {
  const span = tracer().startSpan(
    SPAN.activity,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        [ATTR.activity]: info.name,
        [ATTR.activitySeq]: info.seq,
        [ATTR.attempt]: info.attempt,
        [ATTR.idempotencyKey]: info.idempotencyKey,
        [ATTR.runId]: info.runId,
      },
    },
    parent,
  );
  try {
    const result = await context.with(trace.setSpan(parent, span), attempt);
    span.setStatus({ code: SpanStatusCode.OK });
    return result;
  } catch (err) {
    recordError(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Runs `enqueue` inside a producer span and hands it the span's `traceparent` to put in the
 * message (undefined when tracing is off). A caller's active span becomes the parent.
 */
export async function withEnqueueSpan<T>(
  attributes: Attributes,
  enqueue: (traceparent: string | undefined) => Promise<T>,
): Promise<T> {
  const parent = context.active();
  const span = tracer().startSpan(SPAN.enqueue, { kind: SpanKind.PRODUCER, attributes }, parent);
  const spanContext = trace.setSpan(parent, span);
  try {
    return await enqueue(span.isRecording() ? currentTraceparent(spanContext) : currentTraceparent(parent));
  } catch (err) {
    recordError(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Marks a span failed with the error's message. */
export function recordError(span: Span, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof Error) span.recordException(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
