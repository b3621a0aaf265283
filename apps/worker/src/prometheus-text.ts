/**
 * The worker's `/metrics` text: the Prometheus exporter's reading, with each metric's unit word in
 * its name, so a worker scraped directly and one whose metrics go through an OpenTelemetry
 * Collector show the same names (`baton_activity_duration_seconds`, `v8js_memory_heap_used_bytes`).
 * The JavaScript exporter leaves units out of names; the Collector adds them (see
 * libs/telemetry/src/prometheus-names.ts), so the names are completed here before serializing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { diag } from '@opentelemetry/api';
import { PrometheusSerializer, type PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { DataPointType, type MetricData, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { withUnitSuffix, type PrometheusKind } from '@baton/telemetry';

function kindOf(metric: MetricData): PrometheusKind {
  if (metric.dataPointType === DataPointType.SUM) return metric.isMonotonic ? 'counter' : 'gauge';
  if (metric.dataPointType === DataPointType.GAUGE) return 'gauge';
  return 'histogram';
}

/** The same reading with every metric named as a Collector names it (before `_total`). */
export function withUnitNames(reading: ResourceMetrics): ResourceMetrics {
  return {
    resource: reading.resource,
    scopeMetrics: reading.scopeMetrics.map((scope) => ({
      scope: scope.scope,
      metrics: scope.metrics.map((metric) => {
        const name = withUnitSuffix(metric.descriptor.name, metric.descriptor.unit, kindOf(metric));
        return name === metric.descriptor.name
          ? metric
          : { ...metric, descriptor: { ...metric.descriptor, name } };
      }),
    })),
  };
}

/** A `/metrics` handler reading from `exporter` (whose own server stays off). */
export function metricsHandler(
  exporter: PrometheusExporter,
): (request: IncomingMessage, response: ServerResponse) => void {
  const serializer = new PrometheusSerializer();
  return (_request, response) => {
    exporter.collect().then(
      ({ resourceMetrics, errors }) => {
        // A failed observation (a backlog read that threw) drops that metric, not the scrape.
        if (errors.length > 0) diag.error('/metrics: some metrics could not be collected', ...errors);
        response
          .writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' })
          .end(serializer.serialize(withUnitNames(resourceMetrics)));
      },
      (err: unknown) => {
        response
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`# collecting metrics failed: ${(err as Error)?.message ?? String(err)}\n`);
      },
    );
  };
}
