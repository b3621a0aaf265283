/**
 * Names of everything the transport creates on the server, derived from the prefix alone so
 * every worker and producer with the same prefix finds the same streams.
 */
import type { RunPriority } from '@baton/core/adapter';

/** Where the run messages of one priority level wait: a work-queue stream and its consumer. */
export interface RunLane {
  stream: string;
  subject: string;
  consumer: string;
}

/** Streams, subjects and the consumer of one prefix. */
export interface NatsLayout {
  /** Work-queue stream of run messages: `<PREFIX>_RUNS`. */
  runsStream: string;
  /** `<prefix>.runs` */
  runsSubject: string;
  /** The durable pull consumer every worker shares: `<prefix>-workers`. */
  workersConsumer: string;
  /** Limits stream holding every run's journal: `<PREFIX>_JOURNAL`. */
  journalStream: string;
  /** `<prefix>.journal.>` */
  journalSubjects: string;
  /** Dead letters: `<PREFIX>_DLQ`. */
  deadLetterStream: string;
  /** `<prefix>.dlq` */
  deadLetterSubject: string;
  /** `<prefix>.journal.<runId>`: one subject per run, so a run's records are found by subject. */
  journalSubject(runId: string): string;
  /**
   * The lane of each priority level (docs/priorities.md). `normal` is the runs stream above, as it
   * was before priorities; `high` and `low` are streams of their own, `<PREFIX>_RUNS_HIGH` on
   * `<prefix>.runs.high` and `<PREFIX>_RUNS_LOW` on `<prefix>.runs.low`, each with a consumer
   * `<prefix>-workers`: the runs stream and its consumer are left exactly as an older release made
   * them, so workers of both releases share them during a rollout.
   */
  runLanes: Record<RunPriority, RunLane>;
}

/** The layout of `prefix` (already validated as one safe subject token). */
export function layoutFor(prefix: string): NatsLayout {
  const upper = prefix.toUpperCase();
  const lane = (level: string): RunLane => ({
    stream: `${upper}_RUNS_${level.toUpperCase()}`,
    subject: `${prefix}.runs.${level}`,
    consumer: `${prefix}-workers`,
  });
  return {
    runsStream: `${upper}_RUNS`,
    runsSubject: `${prefix}.runs`,
    workersConsumer: `${prefix}-workers`,
    journalStream: `${upper}_JOURNAL`,
    journalSubjects: `${prefix}.journal.>`,
    deadLetterStream: `${upper}_DLQ`,
    deadLetterSubject: `${prefix}.dlq`,
    journalSubject: (runId) => `${prefix}.journal.${runId}`,
    runLanes: {
      high: lane('high'),
      normal: { stream: `${upper}_RUNS`, subject: `${prefix}.runs`, consumer: `${prefix}-workers` },
      low: lane('low'),
    },
  };
}
