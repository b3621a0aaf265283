/**
 * The fleet: which workers are running now and what each one carries. Part of the Store contract
 * ({@link FleetStore}); every store implements it, and the store conformance suite checks it.
 *
 * A worker writes its {@link WorkerReport} when it starts and once per lease-renewal tick (one
 * write per worker per tick, never one per run), with a time to live of a few ticks. The store
 * stamps each report with its own clock, so a listing never depends on the workers' clocks. A
 * worker that stops gracefully forgets its report; one that dies (SIGKILL, OOM) stops writing, and
 * its report drops out of the listing once its time to live has passed.
 *
 * A report is checked and normalized before the store adapter is asked (`checkedStore`,
 * fleet-check.ts): ConfigError naming the first wrong field, and every store stores the same form.
 *
 * What a rolling deploy reads: `workflows`, exactly the workflow versions each worker registers, so
 * "no live worker registers version N any more" can be decided from one listing.
 *
 * Departed workers ({@link DepartedWorker}): a worker that left is kept for a while, for the
 * operator asking "which pod died and what did it hold?". How it ended is decided by who wrote
 * its last word: `handed-off` when the worker itself said it was leaving ({@link FleetStore.depart},
 * the end of a graceful SIGTERM drain), `expired` when its report's time to live ran out (the
 * store, at its next listing: the worker died, froze or lost the store). Each is kept for the
 * retention its worker asked for, then pruned; its runs are those its last report listed, at most
 * {@link MAX_REPORTED_RUNS}.
 */

/** The versions of one workflow a worker registers. */
export interface WorkflowVersions {
  /** The workflow's name. */
  name: string;
  /** Its registered versions, ascending, each once. */
  versions: number[];
}

/** What a worker tells the fleet about itself. */
export interface WorkerReport {
  /** The worker's id (the lease owner its runs show). */
  workerId: string;
  /** Where it runs: the pod name (`POD_NAME` or `K8S_POD_NAME`), else `HOSTNAME`, else the OS host name. */
  host: string;
  /** Its process id on that host. */
  pid: number;
  /** The version of the `@baton/worker` package it runs. */
  batonVersion: string;
  /** Every workflow it registers with its versions, by name ascending. */
  workflows: WorkflowVersions[];
  /** When it started (ms, the store's clock as the worker estimates it). */
  startedAt: number;
  /**
   * When a renewal round last renewed this worker's leases (ms, the store's clock as the worker
   * estimates it); null before its first. A worker holding no lease keeps the last one.
   */
  lastRenewalAt: number | null;
  /** How many runs it holds now. */
  runsHeld: number;
  /** How many runs it may hold at once. */
  concurrency: number;
  /** True once it was told to stop (SIGTERM) and is handing its runs off. */
  draining: boolean;
  /**
   * The ids of the runs it holds, ascending, at most {@link MAX_REPORTED_RUNS} of them (the first
   * ones; `runsHeld` stays the full count): what a departed worker's record says it held. Absent
   * in the reports of releases from before departed workers were kept.
   */
  runs?: string[];
  /**
   * True when it resumes runs journaled through group records (group commit across runs). Absent
   * in the reports of releases from before group commit, which cannot: workers that group new runs
   * by default wait until no live worker lacks it.
   */
  readsGroupJournal?: boolean;
  /**
   * How it protects values (docs/integrity.md): the id of the encryption key it writes with, the
   * ids it reads, and whether it accepts values sent in the clear. Absent when it encrypts nothing
   * (and in the reports of releases from before sealed values). A client with a store reads it
   * to refuse a start or signal the fleet could not read, before anything is sent.
   */
  encryption?: ReportedEncryption;
}

/** A worker's encryption as its report carries it: key ids only, never key material. */
export interface ReportedEncryption {
  /** The id of the key new data is encrypted with. */
  activeKey: string;
  /** Every key id it decrypts with. */
  keys: string[];
  /** True when it accepts values in the clear (`BATON_ALLOW_PLAINTEXT=true`, a migration). */
  allowsPlaintext: boolean;
}

/** The most run ids a report carries ({@link WorkerReport.runs}), so a report stays small. */
export const MAX_REPORTED_RUNS = 100;

/**
 * How a departed worker ended: `handed-off`, it drained and said so ({@link FleetStore.depart});
 * `expired`, its report's time to live ran out with no word from it (killed, frozen, cut off).
 */
export type WorkerEnd = 'handed-off' | 'expired';

/** A worker that left, as {@link FleetStore.departed} returns it: its last report and how it ended. */
export interface DepartedWorker extends WorkerReport {
  /** When the store last heard from it (ms, the store's clock). */
  lastSeenAt: number;
  /** How it ended. */
  ended: WorkerEnd;
  /**
   * When it ended (ms, the store's clock): when it departed (`handed-off`), or when its report ran
   * out (`expired`: its last `expiresAt`, whenever a listing found it).
   */
  endedAt: number;
  /** When the record is pruned (ms, the store's clock): `endedAt` plus the retention it was given. */
  keptUntil: number;
}

/** A report as {@link FleetStore.list} returns it. */
export interface ReportedWorker extends WorkerReport {
  /** When the store received the latest report (ms, the store's clock). */
  lastSeenAt: number;
  /** When the report stops being listed unless renewed (ms, the store's clock). */
  expiresAt: number;
}

export interface FleetStore {
  /**
   * Writes (or replaces) the worker's report, stamped `lastSeenAt` = now on the store's clock and
   * listed until now + `ttlMs`; once that has passed, the report is kept as an `expired`
   * {@link DepartedWorker} for `keepDepartedMs` more (0, the default: not kept). A report also
   * removes any departed record of the same worker id (it is back). Throws ConfigError naming the
   * field, and writes nothing, for a report that is not a {@link WorkerReport}, a `ttlMs` that is
   * not a whole number of ms ≥ 1 or a `keepDepartedMs` that is not one ≥ 0.
   */
  report(report: WorkerReport, ttlMs: number, keepDepartedMs?: number): Promise<void>;
  /**
   * The reports still within their time to live (store clock), by worker id ascending. Reports
   * past it are left out and removed on the way (a bounded number per call), each kept as an
   * `expired` departed worker when its report asked for that.
   */
  list(): Promise<ReportedWorker[]>;
  /** Removes the worker's report (a graceful stop); nothing happens for an unknown id. */
  forget(workerId: string): Promise<void>;
  /**
   * A graceful stop that leaves a record: removes the worker's live report and keeps `report`
   * (its last word: the runs it held when it began to drain) as a `handed-off`
   * {@link DepartedWorker}, ended now, for `keepMs`; with `keepMs` 0 it is {@link forget}.
   * Checked as {@link report} is.
   */
  depart(report: WorkerReport, keepMs: number): Promise<void>;
  /**
   * The departed workers whose retention has not run out (store clock), the latest `endedAt`
   * first (then by worker id). Records past it are pruned on the way (a bounded number per call),
   * and reports past their time to live are moved here first, as {@link list} moves them.
   */
  departed(): Promise<DepartedWorker[]>;
}
