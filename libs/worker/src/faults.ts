/**
 * Named fault points: places in the run lifecycle where a test can crash a worker at an exact
 * moment (by throwing, or by returning a promise that never settles, which freezes the run the way
 * SIGKILL would). Production code passes none.
 */
export type FaultPoint =
  /** Lease acquired, message not yet acked. */
  | 'lease-acquired'
  /** Entries built (an activity finished, say), not yet appended to the journal. */
  | 'before-journal-append'
  /** Entries durable in the journal. */
  | 'after-journal-append'
  /** Outcome journaled, run not yet marked finished in the store. */
  | 'before-finish'
  /** A run that continues as new marked so in the store (runs.continueAs), nothing carried over yet. */
  | 'continue-marked'
  /** A schedule's starts sent (`runId`: the first; epoch 0), the schedule not yet moved on. */
  | 'schedule-starts-sent';

export interface FaultInfo {
  runId: string;
  epoch: number;
  /** Entry types involved, for the journal points. */
  entryTypes?: string[];
}

export type FaultHook = (point: FaultPoint, info: FaultInfo) => void | Promise<void>;
