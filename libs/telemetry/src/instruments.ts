/**
 * The worker's metric instruments, created once per Worker from the global MeterProvider. Create
 * them after the app registered its SDK: the metrics API has no proxy, so a meter taken before
 * that stays a no-op for good.
 */
import {
  metrics,
  type Attributes,
  type Counter,
  type Histogram,
  type ObservableGauge,
  type ObservableResult,
  type UpDownCounter,
} from '@opentelemetry/api';
import { ATTR, METER_NAME, METRIC, METRIC_UNIT } from './names.js';

export interface WorkerInstruments {
  runsStarted: Counter;
  runsCompleted: Counter;
  runsFailed: Counter;
  runsResumed: Counter;
  /**
   * Runs that reached an end here, by workflow, version and outcome (completed, failed,
   * cancelled): record with {@link recordRunEnd}.
   */
  runsFinished: Counter;
  /** Seconds from a run's creation to its end, by workflow and outcome ({@link recordRunEnd}). */
  runDuration: Histogram;
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
  /** Seconds from a run message's enqueue (a start's `enqueuedAt`, a resume's `since`) to its claim. */
  scheduleToStart: Histogram;
  /** Run messages waiting on the bus to be claimed, read at collection time (observeBacklog). */
  queueBacklog: ObservableGauge;
  /** Bytes journal reads (resumes) fetched from the bus, other runs' entries of group records included. */
  journalReadBytes: Counter;
  /** Times the worker started holding back claims because its heap was above its memory budget. */
  memoryHoldBacks: Counter;
  /** 1 while the worker holds back claims for its memory budget, else 0. */
  memoryHolding: UpDownCounter;
}

/**
 * Label values known before the first event, so that each counter shows on `/metrics` at 0 from
 * the start: a `rate()` or `increase()` over a counter that appears only at its first event misses
 * that event, and an alert on it cannot tell "none yet" from "not reported".
 */
export interface KnownLabels {
  /** Names of the workflows this worker runs (`baton.runs.started` by workflow). */
  workflows: readonly string[];
  /**
   * The workflow versions this worker runs (`baton.runs.finished` by workflow, version and
   * outcome); none when left out.
   */
  versions?: readonly { workflow: string; version: number }[];
  /** Dead-letter codes the worker may use. */
  deadLetterCodes: readonly string[];
  /** Why a run may be resumed: resume and wake reasons. */
  resumeReasons: readonly string[];
}

/** Bucket bounds in seconds for fast store and bus calls: 0.1 ms to 5 s. */
const FAST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];
/** Bucket bounds in seconds for activities and failover: 1 ms to 10 min. */
const SLOW_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];
/** Bucket bounds in seconds for whole runs, sleeps and waits included: 10 ms to a week. */
const RUN_BUCKETS = [
  0.01,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30,
  60,
  300,
  900,
  3600,
  6 * 3600,
  86_400,
  7 * 86_400,
];

/** How a run ended, as `baton.runs.finished` and `baton.run.duration` label it. */
export type RunOutcome = 'completed' | 'failed' | 'cancelled';
const RUN_OUTCOMES: readonly RunOutcome[] = ['completed', 'failed', 'cancelled'];

type MetricKey = keyof typeof METRIC;

export function workerInstruments(known?: KnownLabels): WorkerInstruments {
  const meter = metrics.getMeter(METER_NAME);
  const seconds = (key: MetricKey, description: string, buckets: number[]): Histogram =>
    meter.createHistogram(METRIC[key], {
      description,
      unit: METRIC_UNIT[key].unit,
      advice: { explicitBucketBoundaries: buckets },
    });
  const counter = (key: MetricKey, description: string): Counter =>
    meter.createCounter(METRIC[key], { description, unit: METRIC_UNIT[key].unit });
  const instruments: WorkerInstruments = {
    runsStarted: counter('runsStarted', 'Runs claimed for their first execution'),
    runsCompleted: counter('runsCompleted', 'Runs that completed'),
    runsFailed: counter('runsFailed', 'Runs that failed'),
    runsResumed: counter(
      'runsResumed',
      'Runs claimed to continue an earlier attempt (failover, hand-off, wake)',
    ),
    runsFinished: counter('runsFinished', 'Runs that ended here (completed, failed or cancelled)'),
    runDuration: seconds(
      'runDuration',
      "Time from a run's creation to its end (every attempt, sleep and wait included)",
      RUN_BUCKETS,
    ),
    runsInFlight: meter.createUpDownCounter(METRIC.runsInFlight, {
      description: 'Runs this worker executes now',
      unit: METRIC_UNIT.runsInFlight.unit,
    }),
    activityDuration: seconds('activityDuration', 'Duration of one activity attempt', SLOW_BUCKETS),
    journalAppendDuration: seconds(
      'journalAppendDuration',
      'Duration of one journal append to the bus',
      FAST_BUCKETS,
    ),
    checkpointWriteDuration: seconds(
      'checkpointWriteDuration',
      'Duration of one checkpoint write to the store',
      FAST_BUCKETS,
    ),
    leaseRenewals: counter('leaseRenewals', 'Leases renewed'),
    leaseLosses: counter('leaseLosses', 'Leases this worker lost (another worker now owns the run)'),
    deadLetters: counter('deadLetters', 'Messages dead-lettered'),
    failoverLatency: seconds(
      'failoverLatency',
      "Time from a run's previous owner stopping or being found dead to its claim here",
      SLOW_BUCKETS,
    ),
    runsPutBack: counter(
      'runsPutBack',
      "Run messages put back because this worker lacks the run's workflow version",
    ),
    resumeFailures: counter(
      'resumeFailures',
      'Claims of a run whose resume failed (outcome: backoff, or failed after the last allowed)',
    ),
    signalsDropped: counter('signalsDropped', 'Signals dropped because their run had already finished'),
    storeDataLosses: counter(
      'storeDataLosses',
      'Times the store was found to have lost its data (every run it held is gone)',
    ),
    runsExpired: counter(
      'runsExpired',
      'Finished runs the retention sweep deleted (store data, then journal)',
    ),
    scheduleToStart: seconds(
      'scheduleToStart',
      "Time from a run message's enqueue (start, or the previous owner's stop for a resume) to its claim",
      SLOW_BUCKETS,
    ),
    queueBacklog: meter.createObservableGauge(METRIC.queueBacklog, {
      description: 'Run messages waiting on the bus to be claimed (as the bus counts them)',
      unit: METRIC_UNIT.queueBacklog.unit,
    }),
    journalReadBytes: counter(
      'journalReadBytes',
      "Bytes journal reads fetched from the bus to resume runs (whole group records, other runs' entries included)",
    ),
    memoryHoldBacks: counter(
      'memoryHoldBacks',
      'Times this worker stopped claiming new runs because its heap was above its memory budget',
    ),
    memoryHolding: meter.createUpDownCounter(METRIC.memoryHolding, {
      description: 'Whether this worker holds back claims for its memory budget now (1) or not (0)',
      unit: METRIC_UNIT.memoryHolding.unit,
    }),
  };
  primeCounters(instruments, known);
  return instruments;
}

/** Adds 0 to every counter under each label set known in advance (see {@link KnownLabels}). */
function primeCounters(instruments: WorkerInstruments, known: KnownLabels | undefined): void {
  for (const plain of [
    instruments.runsCompleted,
    instruments.runsFailed,
    instruments.leaseRenewals,
    instruments.leaseLosses,
    instruments.signalsDropped,
    instruments.storeDataLosses,
    instruments.runsExpired,
    instruments.journalReadBytes,
    instruments.memoryHoldBacks,
    instruments.memoryHolding,
    instruments.runsInFlight,
  ]) {
    plain.add(0);
  }
  for (const outcome of ['backoff', 'failed']) instruments.resumeFailures.add(0, { [ATTR.outcome]: outcome });
  if (known === undefined) return;
  for (const workflow of new Set(known.workflows))
    instruments.runsStarted.add(0, { [ATTR.workflow]: workflow });
  for (const code of known.deadLetterCodes) instruments.deadLetters.add(0, { [ATTR.code]: code });
  for (const reason of known.resumeReasons) instruments.runsResumed.add(0, { [ATTR.reason]: reason });
  for (const { workflow, version } of known.versions ?? []) {
    for (const outcome of RUN_OUTCOMES)
      instruments.runsFinished.add(0, runEndLabels(workflow, version, outcome));
  }
}

function runEndLabels(workflow: string, version: number, outcome: RunOutcome): Attributes {
  return { [ATTR.workflow]: workflow, [ATTR.workflowVersion]: version, [ATTR.outcome]: outcome };
}

/**
 * Records a run's end: `baton.runs.finished` by workflow, version and outcome, and
 * `baton.run.duration` by workflow and outcome (its buckets times the versions would be many
 * series for little). `createdAt` is the run's creation time in epoch ms (the store's clock, so
 * skew between it and this worker shows up here; a negative span counts as 0). Called once per
 * run end, never per step.
 */
export function recordRunEnd(
  instruments: WorkerInstruments,
  run: { workflow: string; version: number; createdAt: number },
  outcome: RunOutcome,
  now: number = Date.now(),
): void {
  instruments.runsFinished.add(1, runEndLabels(run.workflow, run.version, outcome));
  instruments.runDuration.record(Math.max(0, now - run.createdAt) / 1000, {
    [ATTR.workflow]: run.workflow,
    [ATTR.outcome]: outcome,
  });
}

/**
 * Reports the run queue's backlog at each collection: `read` is called once per scrape (or
 * periodic export) and should be one cheap, bounded call to the bus. A read that fails or says
 * nothing (undefined) reports no value for that collection rather than a wrong one. Returns a
 * function that stops the reporting (call it when the worker stops).
 */
export function observeBacklog(
  instruments: WorkerInstruments,
  transport: string,
  read: () => Promise<number | undefined>,
): () => void {
  const callback = async (result: ObservableResult): Promise<void> => {
    const backlog = await read().catch(() => undefined);
    if (backlog !== undefined) result.observe(backlog, { [ATTR.transport]: transport });
  };
  instruments.queueBacklog.addCallback(callback);
  return () => instruments.queueBacklog.removeCallback(callback);
}
