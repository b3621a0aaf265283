/**
 * W3C trace context across the bus: the producer's context travels as a `traceparent` string in
 * the start message and on the run record, and every attempt's span becomes its child. Both
 * helpers go through the globally registered propagator, so they do nothing until an SDK sets one.
 */
import { context, propagation, ROOT_CONTEXT, type Context } from '@opentelemetry/api';

/** The active context as a `traceparent` value, or undefined when there is none to carry. */
export function currentTraceparent(active: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  return carrier.traceparent;
}

/** The context a `traceparent` names (the root context when it is missing or malformed). */
export function contextFromTraceparent(traceparent: string | undefined | null): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}
