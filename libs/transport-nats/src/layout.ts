/**
 * Names of everything the transport creates on the server, derived from the prefix alone so
 * every worker and producer with the same prefix finds the same streams.
 */

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
}

/** The layout of `prefix` (already validated as one safe subject token). */
export function layoutFor(prefix: string): NatsLayout {
  const upper = prefix.toUpperCase();
  return {
    runsStream: `${upper}_RUNS`,
    runsSubject: `${prefix}.runs`,
    workersConsumer: `${prefix}-workers`,
    journalStream: `${upper}_JOURNAL`,
    journalSubjects: `${prefix}.journal.>`,
    deadLetterStream: `${upper}_DLQ`,
    deadLetterSubject: `${prefix}.dlq`,
    journalSubject: (runId) => `${prefix}.journal.${runId}`,
  };
}
