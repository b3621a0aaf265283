/**
 * Baton's telemetry vocabulary on the OpenTelemetry API: the names of its spans, attributes and
 * metrics, the instruments the worker records into, and W3C trace-context helpers for messages.
 *
 * Only `@opentelemetry/api` is used here. Without an SDK registered (the apps wire one, see
 * apps/worker/src/telemetry.ts), every tracer, meter and propagator is the API's no-op, so an
 * uninstrumented process pays a few empty calls per activity and nothing else.
 */
export {
  ATTR,
  METRIC,
  METRIC_UNIT,
  PROMETHEUS_NAME,
  SPAN,
  TRACER_NAME,
  METER_NAME,
  type MetricName,
} from './names.js';
export { prometheusName, withUnitSuffix, type PrometheusKind } from './prometheus-names.js';
export {
  observeBacklog,
  recordRunEnd,
  workerInstruments,
  type KnownLabels,
  type RunOutcome,
  type WorkerInstruments,
} from './instruments.js';
export { contextFromTraceparent, currentTraceparent } from './trace-context.js';
export {
  recordError,
  startRunSpan,
  withActivitySpan,
  withEnqueueSpan,
  type ActivitySpanInfo,
  type RunSpanInfo,
} from './spans.js';
