import { describe, expect, it } from 'vitest';
import { PROMETHEUS_NAME } from './names.js';
import { prometheusName, withUnitSuffix } from './prometheus-names.js';

describe('Prometheus names from OpenTelemetry names and units', () => {
  it('adds the unit word a Collector adds, and _total on counters', () => {
    expect(prometheusName('baton.activity.duration', 's', 'histogram')).toBe(
      'baton_activity_duration_seconds',
    );
    expect(prometheusName('v8js.memory.heap.used', 'By', 'gauge')).toBe('v8js_memory_heap_used_bytes');
    expect(prometheusName('baton.runs.started', '{run}', 'counter')).toBe('baton_runs_started_total');
    expect(prometheusName('nodejs.eventloop.utilization', '1', 'gauge')).toBe(
      'nodejs_eventloop_utilization_ratio',
    );
    expect(prometheusName('net.io', 'By/s', 'gauge')).toBe('net_io_bytes_per_second');
    expect(prometheusName('app.requests', '1', 'counter')).toBe('app_requests_total');
  });

  it('never adds a unit word the name already holds', () => {
    expect(withUnitSuffix('nodejs.eventloop.delay.seconds', 's', 'gauge')).toBe(
      'nodejs.eventloop.delay.seconds',
    );
    expect(prometheusName('http.server.seconds.total', 's', 'counter')).toBe('http_server_seconds_total');
    expect(withUnitSuffix('baton.runs.in_flight', '{run}', 'gauge')).toBe('baton.runs.in_flight');
  });

  it('gives every Baton duration a _seconds name and no counter a unit word', () => {
    expect(PROMETHEUS_NAME.activityDuration).toBe('baton_activity_duration_seconds');
    expect(PROMETHEUS_NAME.journalAppendDuration).toBe('baton_journal_append_duration_seconds');
    expect(PROMETHEUS_NAME.checkpointWriteDuration).toBe('baton_checkpoint_write_duration_seconds');
    expect(PROMETHEUS_NAME.failoverLatency).toBe('baton_failover_latency_seconds');
    expect(PROMETHEUS_NAME.scheduleToStart).toBe('baton_runs_schedule_to_start_seconds');
    expect(PROMETHEUS_NAME.runsStarted).toBe('baton_runs_started_total');
    expect(PROMETHEUS_NAME.runsInFlight).toBe('baton_runs_in_flight');
    expect(PROMETHEUS_NAME.queueBacklog).toBe('baton_queue_backlog');
    expect(PROMETHEUS_NAME.journalReadBytes).toBe('baton_journal_read_bytes_total');
    expect(PROMETHEUS_NAME.runsFinished).toBe('baton_runs_finished_total');
    expect(PROMETHEUS_NAME.runDuration).toBe('baton_run_duration_seconds');
  });
});
