/**
 * The Postgres {@link Store}: lifecycle and error mapping, applied once to every capability by the
 * one runner all of them go through (`run`), and the composition of the capability modules
 * (leases, waits, pause, checkpoints, runs, queries, retention, payloads, fleet, schedules,
 * concurrency, rate limits, presence, the journal index) into the contract's capability objects.
 *
 * Lifecycle, the one every adapter shares (`AdapterLifecycle`): `created` (no connection yet) →
 * `connecting` (first connection, migrations) → `ready` → `closed` (final; every operation
 * throws BATON_CLOSED). An operation called before connect() connects first. A failed connect()
 * returns to `created`, so it can be retried. The pool exists from construction on and opens
 * connections as it needs them; connect() only proves the server answers and migrates.
 */
import type { Adapter, PresenceStore, Store } from '@baton/core/adapter';
import { AdapterLifecycle } from '@baton/core/adapter';
import * as checkpoints from './checkpoints.js';
import { Db } from './db.js';
import * as fleet from './fleet.js';
import { connectError, operationError } from './errors.js';
import * as journalIndex from './journal-index.js';
import * as leases from './leases.js';
import { migrate } from './migrations.js';
import type { ResolvedPostgresStoreOptions } from './options.js';
import * as pause from './pause.js';
import * as payloads from './payloads.js';
import * as presence from './presence.js';
import * as concurrency from './concurrency.js';
import * as rateLimits from './rate-limits.js';
import * as queries from './queries.js';
import { checkSynchronousStandby } from './replication.js';
import * as retention from './retention.js';
import * as schedules from './schedules.js';
import * as runs from './runs.js';
import * as waits from './waits.js';

/**
 * Where a store is in its life; see the module comment. `ready` is the lifecycle's `open`, under
 * the name this store has always reported.
 */
export type PostgresStoreState = 'created' | 'connecting' | 'ready' | 'closed';

// The class's capabilities are the contract's members (presence always there), not restated
// here: the constructor builds them, each through its one runner so the store's rules apply to
// every method, and assigns them at once from an object TypeScript checks is complete.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface PostgresStore extends Store {
  readonly presence: PresenceStore;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class PostgresStore implements Store {
  readonly name = 'postgres';

  /** Opens onto the pool, once the server answered and the schema is migrated. */
  private readonly lifecycle = new AdapterLifecycle<Db>({
    adapter: 'postgres store',
    connectHint: 'await store.connect() first',
    closedHint: 'create a new store',
  });
  private readonly db: Db;
  private readonly registry: presence.PresenceRegistry;

  constructor(readonly options: ResolvedPostgresStoreOptions) {
    this.db = new Db(options);
    this.registry = new presence.PresenceRegistry(this.db, options);
    const registry = this.registry;
    const cancels = presence.cancelsChannel(options.schema);
    const capabilities: Omit<PostgresStore, keyof Adapter | 'options' | 'state'> = {
      leases: this.lifecycle.bind(
        'leases',
        {
          acquire: leases.acquireLease,
          renew: leases.renewLeases,
          release: leases.releaseLease,
          suspend: waits.suspendRun,
          reapExpired: leases.reapExpiredLeases,
          get: leases.getLease,
          now: leases.storeNow,
          recordClaimFailure: leases.recordClaimFailure,
        },
        this.run,
      ),
      control: {
        ...this.lifecycle.bind(
          'control',
          {
            // An accepted cancel is told to its owner on the channel its presence session listens on.
            requestCancel: (db: Db, runId: string, reason?: string) =>
              waits.requestCancel(db, runId, reason, cancels),
            closeCancels: waits.closeCancels,
            requestPause: pause.requestPause,
            pauseHeld: pause.pauseHeldRun,
            resume: pause.resumeRun,
          },
          this.run,
        ),
        // A subscription on the worker's presence session, not an operation.
        watchCancels: (workerId, listener) => registry.watchCancels(workerId, listener),
      },
      checkpoints: this.lifecycle.bind(
        'checkpoints',
        {
          write: checkpoints.writeCheckpoint,
          load: checkpoints.loadCheckpoint,
          list: checkpoints.listCheckpoints,
        },
        this.run,
      ),
      runs: this.lifecycle.bind(
        'runs',
        {
          create: runs.createRun,
          createAndLease: runs.createRunAndLease,
          get: runs.getRun,
          finish: runs.finishRun,
          reopen: runs.reopenRun,
          list: queries.listRuns,
          count: queries.countRuns,
        },
        this.run,
      ),
      timers: this.lifecycle.bind('timers', { claimDue: waits.claimDueTimers }, this.run),
      signals: this.lifecycle.bind(
        'signals',
        { deliver: waits.deliverSignal, read: waits.readSignals },
        this.run,
      ),
      presence: {
        register: (workerId) => this.register(workerId),
        ...this.lifecycle.bind(
          'presence',
          {
            unregister: (_db: Db, workerId: string) => registry.unregister(workerId),
            reapDead: presence.reapDeadWorkers,
            live: presence.liveWorkers,
            takeScanTurn: presence.takeScanTurn,
            publishMembership: (db: Db, members: readonly string[]) =>
              registry.publishMembership(db, members),
            readMembership: presence.readMembership,
          },
          this.run,
        ),
        // A subscription on the worker's presence session, not an operation.
        watchMembership: (workerId, listener) => registry.watchMembership(workerId, listener),
      },
      retention: this.lifecycle.bind(
        'retention',
        {
          expired: retention.expiredRuns,
          delete: retention.deleteRun,
          deleteExpired: retention.deleteExpiredRuns,
          tombstone: retention.runTombstone,
        },
        this.run,
      ),
      payloads: {
        location: 'postgres',
        ...this.lifecycle.bind(
          'payloads',
          {
            put: payloads.putPayload,
            get: payloads.getPayload,
            delete: payloads.deletePayloads,
          },
          this.run,
        ),
      },
      fleet: this.lifecycle.bind(
        'fleet',
        {
          report: fleet.reportWorker,
          list: fleet.listWorkers,
          forget: fleet.forgetWorker,
        },
        this.run,
      ),
      schedules: this.lifecycle.bind(
        'schedules',
        {
          create: schedules.createSchedule,
          get: schedules.getSchedule,
          update: schedules.updateSchedule,
          delete: schedules.deleteSchedule,
          list: schedules.listSchedules,
          due: schedules.dueSchedules,
        },
        this.run,
      ),
      concurrency: this.lifecycle.bind(
        'concurrency',
        {
          acquire: concurrency.acquireSlot,
          release: concurrency.releaseSlot,
          state: concurrency.slotState,
        },
        this.run,
      ),
      rateLimits: this.lifecycle.bind('rateLimits', { take: rateLimits.takeRateToken }, this.run),
      // Group commit across runs.
      journalIndex: {
        // One run's steps each wait for a SQL function call: per run is as fast and lower in latency
        // on Postgres (docs/performance.md, "Group commit on Postgres").
        groupsByDefault: false,
        ...this.lifecycle.bind(
          'journalIndex',
          {
            appendPointers: journalIndex.appendPointers,
            markOwnJournal: journalIndex.markOwnJournal,
            readPointers: journalIndex.readPointers,
            deletePointers: journalIndex.deletePointers,
            groupLogUse: journalIndex.groupLogUse,
            forgetGroupLog: journalIndex.forgetGroupLog,
          },
          this.run,
        ),
      },
    };
    Object.assign(this, capabilities);
  }

  /** The lifecycle state. */
  get state(): PostgresStoreState {
    const state = this.lifecycle.state;
    return state === 'open' ? 'ready' : state;
  }

  connect(): Promise<void> {
    // Nothing to release when close() overtakes a connect: close() ends the pool either way.
    return this.lifecycle.connect(
      () => this.prepare(),
      async () => {},
    );
  }

  close(): Promise<void> {
    return this.lifecycle.close(async () => {
      // Each step runs even when another fails: presence sessions first (they live outside the pool).
      await this.registry.closeAll().catch(() => undefined);
      await this.db.end().catch(() => undefined);
    });
  }

  /** One connection proves the server answers; the schema is migrated on it. */
  private async prepare(): Promise<Db> {
    let client;
    try {
      client = await this.db.pool.connect();
    } catch (err) {
      throw connectError(err, this.options);
    }
    try {
      await checkSynchronousStandby(client, this.options);
      await migrate(client, this.options);
    } catch (err) {
      throw connectError(err, this.options);
    } finally {
      client.release();
    }
    return this.db;
  }

  /**
   * Runs one operation (`leases.acquire`): refuses after close, connects first if needed, wraps pg
   * errors. Every capability's methods go through it (`lifecycle.bind`), so these rules are
   * written once.
   */
  private readonly run = async <T>(operation: string, body: (db: Db) => Promise<T>): Promise<T> => {
    const db = await this.lifecycle.openOrConnect(operation, () => this.connect());
    try {
      return await body(db);
    } catch (err) {
      if (this.isClosed()) throw this.lifecycle.closedError(operation, err);
      throw operationError(operation, err, this.options);
    }
  };

  /** Presence's register: its session is a connection of its own, so its failures read as connect failures. */
  private async register(workerId: string): Promise<void> {
    await this.lifecycle.openOrConnect('presence.register', () => this.connect());
    try {
      await this.registry.register(workerId);
    } catch (err) {
      if (this.isClosed()) throw this.lifecycle.closedError('presence.register', err);
      throw connectError(err, this.options);
    }
  }

  /** A method, not a comparison, because close() may change the state across an await. */
  private isClosed(): boolean {
    return this.lifecycle.state === 'closed';
  }
}
