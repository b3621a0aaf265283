/**
 * The store contract: Redis or Postgres (or memory). The store is the source of truth for who
 * owns a run and whether it is alive; every time comparison uses the store's own clock.
 *
 * A store is one object per capability ({@link Store}: `store.leases.acquire(…)`), each a section
 * of the conformance suite and each contract a file of its own; this file composes them:
 * - `leases`, {@link LeaseStore} (contracts/leases.ts): exclusive, expiring ownership with a
 *   fencing epoch; suspension; reaping; the store's clock;
 * - `control`, {@link RunControlStore} (contracts/control.ts): cancel, pause and resume of a run;
 * - `checkpoints`, {@link CheckpointStore} (contracts/checkpoints.ts): fenced snapshots with history;
 * - `runs`, {@link RunIndex} (contracts/run-index.ts) and {@link RunQueries}
 *   (contracts/run-queries.ts): run records, idempotency keys, final outcomes; listing and
 *   counting runs;
 * - `attributes`, {@link RunAttributeStore} (contracts/attributes.ts): a run's search attributes,
 *   fenced, with the indexes the run queries filter by and the counts per value;
 * - `timers`, {@link TimerStore}, and `signals`, {@link SignalInbox} (contracts/waits.ts): due
 *   timers of suspended runs; signals delivered to a run, kept until retention;
 * - `retention`, {@link RetentionStore} (contracts/retention.ts): finished runs past their time
 *   to live, and deleting one;
 * - `payloads`, {@link PayloadStore} (contracts/payloads.ts): large payloads by reference;
 * - `fleet`, {@link FleetStore} (contracts/fleet.ts): the live workers' reports, for operators;
 * - `schedules`, {@link ScheduleStore} (contracts/schedules.ts): schedules, fired with compare-and-set;
 * - `concurrency`, {@link ConcurrencyStore} (contracts/concurrency.ts): slots per concurrency key,
 *   in arrival order;
 * - `rateLimits`, {@link RateLimitStore} (contracts/rate-limits.ts): grants per named limit and
 *   key, in a sliding window;
 * - `updates`, {@link UpdateStore} (contracts/updates.ts): requests to a running run waiting for
 *   its owner, and each answered one's outcome by update id, kept until retention;
 * - `promises`, {@link PromiseStore} (contracts/promises.ts): durable promises by token, completed
 *   once from outside, the completion delivered to the run's inbox in the same step;
 * - `queries`, {@link QueryMailbox} (contracts/query-mailbox.ts): queries to runs, posted to the
 *   worker that holds a run or to any worker, and their replies;
 * - `journalIndex`, {@link JournalIndex} (contracts/group-journal.ts, optional): each run's
 *   pointers into group records, for group commit across runs;
 * - `presence`, {@link PresenceStore} (contracts/presence.ts, optional): which workers are alive, bound to their store
 *   connections, so a killed worker's runs are resumed when its connection drops instead of when
 *   its leases run out. A store without it (the in-memory one) leaves `presence` out; the worker
 *   then finds a crashed worker's runs by lease expiry alone, and the conformance suite skips the
 *   presence section for it.
 *
 * Checks: every store refuses a bad argument alike (a run query, a schedule, a worker report, a
 * slot or rate-limit request: ConfigError naming the field), because the checks are made once, in
 * core, before a call reaches the adapter: an adapter implements {@link StoreAdapter} (the same
 * capabilities, its arguments already checked) and its factory returns it through `checkedStore`.
 *
 * Lifecycle, the same as a transport's ({@link Adapter}): created unconnected, `connect()`
 * prepares and is safe to repeat, `close()` is final and safe to repeat, and every operation after
 * close() rejects with BATON_CLOSED.
 *
 * Left out on purpose: the journal (it lives on the transport) and delivery of messages (the
 * store tells the caller when a wake is needed; the caller enqueues it).
 */
import type { Adapter } from './adapter.js';
import type { RunAttributeStore } from './attributes.js';
import type { CheckpointStore } from './checkpoints.js';
import type { ConcurrencyStore } from './concurrency.js';
import type { RunControlStore } from './control.js';
import type { FleetStore } from './fleet.js';
import type { JournalIndex } from './group-journal.js';
import type { LeaseStore } from './leases.js';
import type { PayloadStore } from './payloads.js';
import type { PresenceStore } from './presence.js';
import type { QueryMailbox } from './query-mailbox.js';
import type { RateLimitStore } from './rate-limits.js';
import type { PromiseStore } from './promises.js';
import type { RetentionStore } from './retention.js';
import type { RunIndex } from './run-index.js';
import type { CheckedRunQuery, RunListing, RunQueries } from './run-queries.js';
import type { CheckedScheduleQuery, SchedulePage, ScheduleStore } from './schedules.js';
import type { SignalInbox, TimerStore } from './waits.js';
import type { UpdateStore } from './updates.js';

// ---------------------------------------------------------------------------------------------
// Data loss

/** What a store found when it noticed that it lost its data (see {@link Store.onDataLoss}). */
export interface StoreDataLoss {
  /** The store's name (`redis`). */
  store: string;
  /** What was found and how, for the log: which marker is gone, which server instance answers now. */
  reason: string;
}

/** A data loss the store recorded when it found it ({@link Store.lastDataLoss}). */
export interface RecordedDataLoss extends StoreDataLoss {
  /** When it was found, on the finder's clock (ms since the epoch). */
  at: number;
}

// ---------------------------------------------------------------------------------------------
// The store

/**
 * A store adapter: Redis, Postgres, or in-memory, as one object per capability
 * (`store.leases.acquire(…)`, `store.runs.get(…)`), so an adapter composes its capability modules
 * and applies its rules (lifecycle, error mapping) once per capability instead of per method.
 * Presence is optional ({@link PresenceStore}).
 */
export interface Store extends Adapter {
  /** Exclusive, expiring ownership of runs with a fencing epoch; suspension; reaping; the store's clock. */
  readonly leases: LeaseStore;
  /** Cancel, pause and resume of a run. */
  readonly control: RunControlStore;
  /** Fenced snapshots of a run, with history. */
  readonly checkpoints: CheckpointStore;
  /** Run records, idempotency keys and outcomes; listing and counting them (contracts/run-queries.ts). */
  readonly runs: RunIndex & RunQueries;
  /** A run's search attributes, their indexes and counts per value (contracts/attributes.ts). */
  readonly attributes: RunAttributeStore;
  /** Due timers of suspended runs. */
  readonly timers: TimerStore;
  /** Signals delivered to a run, kept until retention. */
  readonly signals: SignalInbox;
  /**
   * Optional: which workers are alive, bound to their store connections. A store has all of it or
   * none (the in-memory one); without it a crashed worker's runs are found by lease expiry alone.
   */
  readonly presence?: PresenceStore;
  /** Finished runs past their time to live, and deleting one. */
  readonly retention: RetentionStore;
  /** Large payloads by reference (claim check); every store keeps them, scoped by run. */
  readonly payloads: PayloadStore;
  /** The live workers' reports, for operators (contracts/fleet.ts). */
  readonly fleet: FleetStore;
  /** Schedules, fired with compare-and-set (contracts/schedules.ts). */
  readonly schedules: ScheduleStore;
  /** Slots per concurrency key, in arrival order (contracts/concurrency.ts). */
  readonly concurrency: ConcurrencyStore;
  /** Grants per named limit and key, in a sliding window (contracts/rate-limits.ts). */
  readonly rateLimits: RateLimitStore;
  /** Requests to a running run and their kept outcomes, by update id (contracts/updates.ts). */
  readonly updates: UpdateStore;
  /** Durable promises by token, completed once from outside (contracts/promises.ts). */
  readonly promises: PromiseStore;
  /** Queries to runs and their replies (contracts/query-mailbox.ts). */
  readonly queries: QueryMailbox;
  /**
   * Optional: calls `listener` whenever the store finds it lost its data while this process was
   * connected (a Redis without persistence restarted empty). Such a store keeps working, empty:
   * every run it held is gone. Stores whose data survives a restart (Postgres) leave it out.
   */
  onDataLoss?(listener: (loss: StoreDataLoss) => void): void;
  /**
   * Optional, with {@link onDataLoss}: the last data loss any process found, recorded in the data
   * kept since, so a client that was not connected then can tell a run the store lost from one
   * that never existed. Undefined when none was found (a loss while no process was connected is
   * found by nobody).
   */
  lastDataLoss?(): Promise<RecordedDataLoss | undefined>;
  /**
   * Each run's pointers into group records, for group commit across runs
   * (contracts/group-journal.ts). Optional: a store without it serves per-run journals only.
   */
  readonly journalIndex?: JournalIndex;
}

/**
 * What a store adapter implements: the {@link Store}, every argument already checked. An adapter's
 * factory hands it to `checkedStore` (adapter/checked-store.ts), which makes the checks all stores
 * share once, before a call reaches the adapter, and returns the Store its callers use. So:
 * - `runs.list` receives a {@link CheckedRunQuery} (valid, defaults filled in, its cursor read
 *   back into a position) and answers a {@link RunListing}: where the next page starts, which
 *   `checkedStore` issues as the caller's cursor;
 * - `schedules.list` receives a {@link CheckedScheduleQuery} (its page size filled in);
 *   `schedules.create` and `update` a checked, normalized record (unknown fields dropped); `get`
 *   and `delete` a valid schedule id; `due` a valid limit;
 * - `fleet.report` receives the report checked and normalized, and a valid time to live;
 * - `concurrency.acquire` and `release`, and `rateLimits.take`, a valid request;
 * - `updates.request`, `settle` and `outcome`, a valid update id (and name).
 * Every other member is the Store's, unchanged. An argument that fails its check is a ConfigError
 * naming the field, and the adapter is never asked.
 */
export interface StoreAdapter extends Omit<Store, 'runs' | 'schedules'> {
  /** Run records; listing a checked query, counting (contracts/run-queries.ts). */
  readonly runs: RunIndex & Pick<RunQueries, 'count'> & { list(query: CheckedRunQuery): Promise<RunListing> };
  /** Schedules; listing a checked query (contracts/schedules.ts). */
  readonly schedules: Omit<ScheduleStore, 'list'> & {
    list(query: CheckedScheduleQuery): Promise<SchedulePage>;
  };
}
