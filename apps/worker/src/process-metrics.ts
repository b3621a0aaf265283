/**
 * The process's own metrics, under the OpenTelemetry semantic conventions' names: CPU seconds by
 * mode (`process.cpu.time`, `cpu.mode` user or system), resident memory (`process.memory.usage`)
 * and uptime (`process.uptime`). On `/metrics` they read `process_cpu_time_seconds_total`,
 * `process_memory_usage_bytes` and `process_uptime_seconds`, as a Collector names them.
 * Node's runtime metrics (event-loop delay, heap, GC) come from
 * `@opentelemetry/instrumentation-runtime-node` (telemetry.ts); these complete them with what the
 * operating system sees.
 *
 * Invariants:
 * - Nothing here runs between collections: every instrument is observable, read by one callback
 *   when the metrics are collected (a scrape or an OTLP export), so a step costs nothing more.
 * - The callback reads `process.cpuUsage()`, `process.memoryUsage.rss()` and `process.uptime()`:
 *   three system calls, no allocation worth counting.
 */
import { metrics, type BatchObservableResult, type Meter } from '@opentelemetry/api';

/** The meter's name, beside Baton's own (`@baton/worker`) and the runtime instrumentation's. */
export const PROCESS_METER_NAME = '@baton/worker/process';

/** Starts reporting on the global MeterProvider (register the SDK first); returns the stop. */
export function startProcessMetrics(meter: Meter = metrics.getMeter(PROCESS_METER_NAME)): () => void {
  const cpu = meter.createObservableCounter('process.cpu.time', {
    description: 'CPU seconds this process used, by mode (user, system)',
    unit: 's',
  });
  const memory = meter.createObservableUpDownCounter('process.memory.usage', {
    description: 'Resident memory of this process (RSS)',
    unit: 'By',
  });
  const uptime = meter.createObservableGauge('process.uptime', {
    description: 'Seconds since this process started',
    unit: 's',
  });
  const user = Object.freeze({ 'cpu.mode': 'user' });
  const system = Object.freeze({ 'cpu.mode': 'system' });
  const callback = (result: BatchObservableResult): void => {
    const used = process.cpuUsage();
    result.observe(cpu, used.user / 1e6, user);
    result.observe(cpu, used.system / 1e6, system);
    result.observe(memory, process.memoryUsage.rss());
    result.observe(uptime, process.uptime());
  };
  const observables = [cpu, memory, uptime];
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}
