/**
 * The worker's metric instruments, created once per Worker from the global MeterProvider. Create
 * them after the app registered its SDK: the metrics API has no proxy, so a meter taken before
 * that stays a no-op for good.
 */
import { metrics, type Counter, type Histogram, type UpDownCounter } from '@opentelemetry/api';
import { METER_NAME, METRIC } from './names.js';

export interface WorkerInstruments {
  runsStarted: Counter;
  runsCompleted: Counter;
  runsFailed: Counter;
  runsResumed: Counter;
  runsInFlight: UpDownCounter;
  /** Seconds per activity attempt. */
  activityDuration: Histogram;
  /** Seconds per journal append (one record on the bus). */
  journalAppendDuration: Histogram;
  /** Seconds per checkpoint write to the store. */
  checkpointWriteDuration: Histogram;
  leaseRenewals: Counter;
  leaseLosses: Counter;
  deadLetters: Counter;
  /** Seconds from a run's previous owner stopping (or being found dead) to its next claim. */
  failoverLatency: Histogram;
  /** Run messages put back because this worker lacks the run's workflow version. */
  runsPutBack: Counter;
  /**
   * Claims whose resume threw and was recorded on the run (label `baton.outcome`: `backoff` when
   * the run waits for another claim, `failed` when that was the last one allowed).
   */
  resumeFailures: Counter;
  /** Signals that arrived after their run finished: acked and not kept. */
  signalsDropped: Counter;
  /** Times the store was found to have lost its data (a Redis restarted without persistence). */
  storeDataLosses: Counter;
  /** Finished runs the retention sweep deleted. */
  runsExpired: Counter;
}

/** Bucket bounds in seconds for fast store and bus calls: 0.1 ms to 5 s. */
const FAST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];
/** Bucket bounds in seconds for activities and failover: 1 ms to 10 min. */
const SLOW_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

export function workerInstruments(): WorkerInstruments {
  const meter = metrics.getMeter(METER_NAME);
  const seconds = (name: string, description: string, buckets: number[]): Histogram =>
    meter.createHistogram(name, {
      description,
      unit: 's',
      advice: { explicitBucketBoundaries: buckets },
    });
  return {
    runsStarted: meter.createCounter(METRIC.runsStarted, {
      description: 'Runs claimed for their first execution',
    }),
    runsCompleted: meter.createCounter(METRIC.runsCompleted, { description: 'Runs that completed' }),
    runsFailed: meter.createCounter(METRIC.runsFailed, { description: 'Runs that failed' }),
    runsResumed: meter.createCounter(METRIC.runsResumed, {
      description: 'Runs claimed to continue an earlier attempt (failover, hand-off, wake)',
    }),
    runsInFlight: meter.createUpDownCounter(METRIC.runsInFlight, {
      description: 'Runs this worker executes now',
    }),
    activityDuration: seconds(METRIC.activityDuration, 'Duration of one activity attempt', SLOW_BUCKETS),
    journalAppendDuration: seconds(
      METRIC.journalAppendDuration,
      'Duration of one journal append to the bus',
      FAST_BUCKETS,
    ),
    checkpointWriteDuration: seconds(
      METRIC.checkpointWriteDuration,
      'Duration of one checkpoint write to the store',
      FAST_BUCKETS,
    ),
    leaseRenewals: meter.createCounter(METRIC.leaseRenewals, { description: 'Leases renewed' }),
    leaseLosses: meter.createCounter(METRIC.leaseLosses, {
      description: 'Leases this worker lost (another worker now owns the run)',
    }),
    deadLetters: meter.createCounter(METRIC.deadLetters, { description: 'Messages dead-lettered' }),
    failoverLatency: seconds(
      METRIC.failoverLatency,
      "Time from a run's previous owner stopping or being found dead to its claim here",
      SLOW_BUCKETS,
    ),
    runsPutBack: meter.createCounter(METRIC.runsPutBack, {
      description: "Run messages put back because this worker lacks the run's workflow version",
    }),
    resumeFailures: meter.createCounter(METRIC.resumeFailures, {
      description: 'Claims of a run whose resume failed (outcome: backoff, or failed after the last allowed)',
    }),
    signalsDropped: meter.createCounter(METRIC.signalsDropped, {
      description: 'Signals dropped because their run had already finished',
    }),
    storeDataLosses: meter.createCounter(METRIC.storeDataLosses, {
      description: 'Times the store was found to have lost its data (every run it held is gone)',
    }),
    runsExpired: meter.createCounter(METRIC.runsExpired, {
      description: 'Finished runs the retention sweep deleted (store data, then journal)',
    }),
  };
}
