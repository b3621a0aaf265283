/**
 * Names of everything Baton reports. Dashboards and alerts depend on them: change one only with
 * a note in docs/operations.md ("Renamed metrics"). Metric names follow OpenTelemetry conventions
 * (dots, no unit in the name, the unit in the instrument's `unit`); their Prometheus names
 * ({@link PROMETHEUS_NAME}) add the unit's word and `_total` on counters, the same on a worker's
 * own `/metrics` and behind an OpenTelemetry Collector (prometheus-names.ts): `baton.runs.started`
 * is `baton_runs_started_total`, `baton.activity.duration` (a histogram in seconds)
 * `baton_activity_duration_seconds_bucket`, `_sum` and `_count`.
 */
import { prometheusName, type PrometheusKind } from './prometheus-names.js';

export const TRACER_NAME = '@baton/worker';
export const METER_NAME = '@baton/worker';

export const SPAN = {
  /** Producer side: one run enqueued (`Client.start`). */
  enqueue: 'baton.enqueue',
  /** One execution attempt of a run on one worker, from claim to finish, suspend or hand-off. */
  run: 'baton.run',
  /** One attempt of one activity. */
  activity: 'baton.activity',
} as const;

export const ATTR = {
  workflow: 'baton.workflow',
  workflowVersion: 'baton.workflow.version',
  runId: 'baton.run.id',
  epoch: 'baton.run.epoch',
  /** true when this attempt continues a run an earlier attempt began. */
  resumed: 'baton.run.resumed',
  /** What brought the run here: start, resume (hand-off, reaped), wake. */
  via: 'baton.run.via',
  /** How the attempt ended: completed, failed, cancelled, suspended, handed-off, aborted. */
  end: 'baton.run.end',
  workerId: 'baton.worker.id',
  activity: 'baton.activity.name',
  activitySeq: 'baton.activity.seq',
  attempt: 'baton.activity.attempt',
  idempotencyKey: 'baton.activity.idempotency_key',
  /**
   * Metric label: outcome of an activity attempt (ok, error), of a finished run (completed, failed,
   * cancelled), of a failed resume (backoff, failed).
   */
  outcome: 'baton.outcome',
  /** Metric label: why a run was resumed (handoff, reaped, timer, signal, ...). */
  reason: 'baton.reason',
  /** Metric label: dead-letter code. */
  code: 'baton.dead_letter.code',
  /** Metric label: the bus a backlog was read from (nats, kafka). */
  transport: 'baton.transport',
} as const;

export const METRIC = {
  runsStarted: 'baton.runs.started',
  runsCompleted: 'baton.runs.completed',
  runsFailed: 'baton.runs.failed',
  runsResumed: 'baton.runs.resumed',
  runsFinished: 'baton.runs.finished',
  runDuration: 'baton.run.duration',
  runsInFlight: 'baton.runs.in_flight',
  activityDuration: 'baton.activity.duration',
  journalAppendDuration: 'baton.journal.append.duration',
  checkpointWriteDuration: 'baton.checkpoint.write.duration',
  leaseRenewals: 'baton.lease.renewals',
  leaseLosses: 'baton.lease.losses',
  deadLetters: 'baton.dead_letters',
  failoverLatency: 'baton.failover.latency',
  runsPutBack: 'baton.runs.put_back',
  resumeFailures: 'baton.resume.failures',
  signalsDropped: 'baton.signals.dropped',
  storeDataLosses: 'baton.store.data_losses',
  runsExpired: 'baton.runs.expired',
  scheduleToStart: 'baton.runs.schedule_to_start',
  queueBacklog: 'baton.queue.backlog',
  journalReadBytes: 'baton.journal.read.bytes',
  memoryHoldBacks: 'baton.memory.hold_backs',
  memoryHolding: 'baton.memory.holding',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];
type MetricKey = keyof typeof METRIC;

/**
 * Each metric's unit (UCUM, as OpenTelemetry wants it) and Prometheus type. Counts carry an
 * annotation in braces, which adds nothing to a Prometheus name; durations are in seconds (`s`),
 * which adds `_seconds`; sizes would be in bytes (`By`, `_bytes`).
 */
export const METRIC_UNIT: Readonly<Record<MetricKey, { unit: string; kind: PrometheusKind }>> = {
  runsStarted: { unit: '{run}', kind: 'counter' },
  runsCompleted: { unit: '{run}', kind: 'counter' },
  runsFailed: { unit: '{run}', kind: 'counter' },
  runsResumed: { unit: '{run}', kind: 'counter' },
  runsFinished: { unit: '{run}', kind: 'counter' },
  runDuration: { unit: 's', kind: 'histogram' },
  runsInFlight: { unit: '{run}', kind: 'gauge' },
  activityDuration: { unit: 's', kind: 'histogram' },
  journalAppendDuration: { unit: 's', kind: 'histogram' },
  checkpointWriteDuration: { unit: 's', kind: 'histogram' },
  leaseRenewals: { unit: '{lease}', kind: 'counter' },
  leaseLosses: { unit: '{lease}', kind: 'counter' },
  deadLetters: { unit: '{message}', kind: 'counter' },
  failoverLatency: { unit: 's', kind: 'histogram' },
  runsPutBack: { unit: '{message}', kind: 'counter' },
  resumeFailures: { unit: '{claim}', kind: 'counter' },
  signalsDropped: { unit: '{signal}', kind: 'counter' },
  storeDataLosses: { unit: '{loss}', kind: 'counter' },
  runsExpired: { unit: '{run}', kind: 'counter' },
  scheduleToStart: { unit: 's', kind: 'histogram' },
  queueBacklog: { unit: '{message}', kind: 'gauge' },
  journalReadBytes: { unit: 'By', kind: 'counter' },
  memoryHoldBacks: { unit: '{hold}', kind: 'counter' },
  memoryHolding: { unit: '{worker}', kind: 'gauge' },
};

/**
 * The Prometheus name of each metric, identical on a worker's `/metrics` and through an
 * OpenTelemetry Collector's Prometheus exporter (default settings). A histogram's series add
 * `_bucket`, `_sum` and `_count` to it.
 */
export const PROMETHEUS_NAME = Object.fromEntries(
  (Object.keys(METRIC) as MetricKey[]).map((key) => [
    key,
    prometheusName(METRIC[key], METRIC_UNIT[key].unit, METRIC_UNIT[key].kind),
  ]),
) as Readonly<Record<MetricKey, string>>;
