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
   * listed until now + `ttlMs`. Throws ConfigError naming the field, and writes nothing, for a
   * report that is not a {@link WorkerReport} or a `ttlMs` that is not a whole number of ms ≥ 1.
   */
  report(report: WorkerReport, ttlMs: number): Promise<void>;
  /**
   * The reports still within their time to live (store clock), by worker id ascending. Reports
   * past it are left out and removed on the way.
   */
  list(): Promise<ReportedWorker[]>;
  /** Removes the worker's report (a graceful stop); nothing happens for an unknown id. */
  forget(workerId: string): Promise<void>;
}
