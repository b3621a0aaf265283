/**
 * OpenTelemetry for the worker process (and the producer), configured only by the standard OTEL_*
 * variables:
 * - Metrics are always collected for `/metrics` (Prometheus text, pulled by the HTTP server);
 *   `OTEL_METRICS_EXPORTER=otlp` also pushes them to an OTLP endpoint.
 * - Tracing starts only when an exporter is configured (`OTEL_TRACES_EXPORTER` other than `none`,
 *   or `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`). Otherwise no tracer
 *   provider or propagator is registered: spans are the API's no-ops and start messages carry no
 *   trace context, so tracing that is off costs nothing.
 * - `OTEL_SDK_DISABLED=true` turns every exporter off; `/metrics` still answers.
 * - Node's runtime metrics (event-loop delay and utilization, heap spaces, GC pauses) come from
 *   `@opentelemetry/instrumentation-runtime-node`, next to Baton's own; the process's CPU seconds,
 *   resident memory and uptime from process-metrics.ts.
 * - `/metrics` names every metric with its unit's word, as a Collector does (prometheus-text.ts).
 * This module is called before any Worker is built: the metrics API has no proxy, so instruments
 * created earlier would stay no-ops. The tracing SDK and the OTLP exporters are imported only when
 * the variables ask for them: together they are a large part of the process's start-up.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { RuntimeNodeInstrumentation } from '@opentelemetry/instrumentation-runtime-node';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type IMetricReader } from '@opentelemetry/sdk-metrics';
import { startProcessMetrics } from './process-metrics.js';
import { metricsHandler } from './prometheus-text.js';

type Env = Record<string, string | undefined>;

/**
 * The standard OpenTelemetry SDK variables deployments commonly set for the worker and the
 * producer (the SDK reads more; these are the ones our chart and compose file may use).
 */
export const OTEL_ENV = [
  'OTEL_SDK_DISABLED',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_TRACES_EXPORTER',
  'OTEL_METRICS_EXPORTER',
  'OTEL_LOGS_EXPORTER',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
] as const;

export interface Telemetry {
  /** Whether spans are exported. */
  readonly tracing: boolean;
  /** Serves the Prometheus text of every metric (the `/metrics` route). */
  serveMetrics(request: IncomingMessage, response: ServerResponse): void;
  /** Flushes and stops the exporters. */
  shutdown(): Promise<void>;
}

function list(env: Env, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v.length > 0);
}

/** True when the environment asks for spans to be exported. */
export function tracingRequested(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = list(env, 'OTEL_TRACES_EXPORTER');
  if (exporters.length > 0) return !exporters.every((e) => e === 'none');
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

export async function startTelemetry(env: Env, defaultServiceName: string): Promise<Telemetry> {
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || defaultServiceName;
  // Pulled by our own HTTP server: the exporter's built-in server stays off.
  const prometheus = new PrometheusExporter({ preventServerStart: true });
  const serveMetrics = metricsHandler(prometheus);
  const readers: IMetricReader[] = [prometheus];
  if (!disabled && list(env, 'OTEL_METRICS_EXPORTER').includes('otlp')) {
    const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-http');
    readers.push(new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter() }));
  }

  if (tracingRequested(env)) {
    const { NodeSDK } = await import('@opentelemetry/sdk-node');
    const sdk = new NodeSDK({
      serviceName,
      metricReaders: readers,
      // Baton's own spans only: no auto-instrumentation of the bus and store clients.
      instrumentations: [],
      logRecordProcessors: [],
    });
    sdk.start();
    const runtime = startRuntimeMetrics();
    return {
      tracing: true,
      serveMetrics,
      shutdown: () => (runtime.stop(), sdk.shutdown()),
    };
  }

  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    readers,
  });
  metrics.setGlobalMeterProvider(provider);
  const runtime = startRuntimeMetrics();
  return {
    tracing: false,
    serveMetrics,
    shutdown: () => (runtime.stop(), provider.shutdown()),
  };
}

/**
 * Node's runtime metrics and the process's on the global MeterProvider (registered just before).
 * Started here rather than through NodeSDK's `instrumentations`, so both paths (with and without
 * tracing) get them the same way. The runtime instrumentation makes its instruments when it is
 * handed a MeterProvider (setMeterProvider, as registerInstrumentations does), not when it is
 * constructed. Stopped at shutdown: it holds an event-loop delay monitor and a GC observer.
 */
function startRuntimeMetrics(): { stop(): void } {
  const runtime = new RuntimeNodeInstrumentation();
  runtime.setMeterProvider(metrics.getMeterProvider());
  const stopProcess = startProcessMetrics();
  return {
    stop: () => {
      runtime.disable();
      stopProcess();
    },
  };
}
