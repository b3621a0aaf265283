/**
 * What wakes a suspended run: its timer (`store.timers`, {@link TimerStore}) and the signals
 * delivered to it (`store.signals`, {@link SignalInbox}). Part of the store contract (store.ts);
 * a run is suspended by `leases.suspend` (leases.ts) and woken by a cancel too (control.ts).
 */

export interface DueTimer {
  runId: string;
  dueAt: number;
}

export interface TimerStore {
  /**
   * Returns suspended runs whose timer is due (store clock), earliest first, and pushes each
   * returned timer `redeliverAfterMs` into the future so a lost wake is retried. A timer is
   * removed when its run's lease is acquired.
   */
  claimDue(limit: number, redeliverAfterMs: number): Promise<DueTimer[]>;
}

export interface InboxSignal {
  signalId: string;
  name: string;
  payload: unknown;
  receivedAt: number;
}

export interface SignalInbox {
  /**
   * Adds a signal to the run's inbox (a second delivery of the same `signalId` is ignored).
   * `wake` is true when the run was suspended waiting for this name: it is now acquirable and the
   * caller should enqueue a wake message. `found` is false for an unknown run.
   * A finished run (its lease `finished`: completed, failed or cancelled) keeps nothing: the
   * signal is dropped and the answer says `dropped: true` (absent otherwise), so signals sent
   * after the end cannot pile up in an inbox nobody reads.
   * A run that has continued as new (`runs.continueAs`) keeps nothing either: a signal id its
   * inbox already holds answers `{ found: true, wake: false }` as any repeat does, and every other
   * answers `continuedAs` (the successor's run id, for the caller to deliver to), with `dropped`
   * once the run is finished (while it is not, its owner is still carrying its inbox over).
   */
  deliver(
    runId: string,
    signal: Omit<InboxSignal, 'receivedAt'>,
  ): Promise<{ found: boolean; wake: boolean; dropped?: boolean; continuedAs?: string }>;
  /** The run's inbox, in arrival order. */
  read(runId: string): Promise<InboxSignal[]>;
}
