/**
 * Names of everything Baton reports. Dashboards and alerts depend on them: change one only with
 * a note in the changelog. Metric names follow OpenTelemetry conventions (dots, a unit); the
 * Prometheus exporter turns `baton.runs.started` into `baton_runs_started_total` and
 * `baton.activity.duration` (a histogram in seconds) into `baton_activity_duration_bucket`,
 * `_sum` and `_count`.
 */

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
  /** Metric label: outcome of an activity attempt (ok, error). */
  outcome: 'baton.outcome',
  /** Metric label: why a run was resumed (handoff, reaped, timer, signal, ...). */
  reason: 'baton.reason',
  /** Metric label: dead-letter code. */
  code: 'baton.dead_letter.code',
} as const;

export const METRIC = {
  runsStarted: 'baton.runs.started',
  runsCompleted: 'baton.runs.completed',
  runsFailed: 'baton.runs.failed',
  runsResumed: 'baton.runs.resumed',
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
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];
