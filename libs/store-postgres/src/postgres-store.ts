/**
 * The Postgres {@link Store}: lifecycle and error mapping, applied once to every capability by the
 * one runner all of them go through (`run`), and the composition of the capability modules into
 * the contract's capability objects. Each module is written against its contract (`OperationsOf`)
 * and bound whole: leases.ts, control.ts, checkpoints.ts, runs.ts and queries.ts (a run's claim,
 * cancel close and finish through batch.ts), waits.ts
 * (timers, signals), presence.ts, retention.ts, payloads.ts, fleet.ts, schedules.ts,
 * concurrency.ts, rate-limits.ts, updates.ts, journal-index.ts, query-mailbox.ts.
 *
 * Lifecycle, the one every adapter shares (`AdapterLifecycle`): `created` (no connection yet) →
 * `connecting` (first connection, migrations) → `ready` → `closed` (final; every operation
 * throws BATON_CLOSED). An operation called before connect() connects first. A failed connect()
 * returns to `created`, so it can be retried. The pool exists from construction on and opens
 * connections as it needs them; connect() only proves the server answers and migrates.
 */
import type { Adapter, PresenceStore, StoreAdapter } from '@baton/core/adapter';
import { AdapterLifecycle } from '@baton/core/adapter';
import { RunBatches } from './batch.js';
import { checkpoints } from './checkpoints.js';
import { concurrency } from './concurrency.js';
import { controlOperations } from './control.js';
import { Db } from './db.js';
import { connectError, operationError } from './errors.js';
import { fleet } from './fleet.js';
import { journalIndex } from './journal-index.js';
import { leases } from './leases.js';
import { migrate } from './migrations.js';
import type { ResolvedPostgresStoreOptions } from './options.js';
import { payloads } from './payloads.js';
import { promises } from './promises.js';
import { cancelsChannel, presenceOperations, PresenceRegistry } from './presence.js';
import { attributes } from './attributes.js';
import { runQueries } from './queries.js';
import { PostgresQueryMailbox } from './query-mailbox.js';
import { rateLimits } from './rate-limits.js';
import { updates } from './updates.js';
import { checkSynchronousStandby } from './replication.js';
import { retention } from './retention.js';
import { runIndex } from './runs.js';
import { schedules } from './schedules.js';
import { signals, timers } from './waits.js';

/**
 * Where a store is in its life; see the module comment. `ready` is the lifecycle's `open`, under
 * the name this store has always reported.
 */
export type PostgresStoreState = 'created' | 'connecting' | 'ready' | 'closed';

// The class's capabilities are the contract's members (presence always there), not restated
// here: the constructor builds them, each through its one runner so the store's rules apply to
// every method, and assigns them at once from an object TypeScript checks is complete.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface PostgresStore extends StoreAdapter {
  readonly presence: PresenceStore;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class PostgresStore implements StoreAdapter {
  readonly name = 'postgres';

  /** Opens onto the pool, once the server answered and the schema is migrated. */
  private readonly lifecycle = new AdapterLifecycle<Db>({
    adapter: 'postgres store',
    connectHint: 'await store.connect() first',
    closedHint: 'create a new store',
  });
  private readonly db: Db;
  private readonly registry: PresenceRegistry;
  /** Queries to runs: its operations, and the LISTEN session they are told on. */
  private readonly mailbox: PostgresQueryMailbox;

  constructor(readonly options: ResolvedPostgresStoreOptions) {
    this.db = new Db(options);
    const registry = (this.registry = new PresenceRegistry(this.db, options));
    const mailbox = (this.mailbox = new PostgresQueryMailbox(options));
    // A run's claim, cancel close and finish, batched across runs (batch.ts).
    const batches = new RunBatches(this.db);
    const bound = this.lifecycle.bindAll(
      {
        leases,
        control: { ...controlOperations(cancelsChannel(options.schema)), ...batches.control },
        checkpoints,
        runs: { ...runIndex, ...runQueries, ...batches.runs },
        attributes,
        timers,
        signals,
        presence: presenceOperations(registry),
        retention,
        payloads,
        fleet,
        schedules,
        concurrency,
        rateLimits,
        updates,
        promises,
        journalIndex,
        queries: mailbox.operations,
      },
      this.run,
    );
    const capabilities: Omit<PostgresStore, keyof Adapter | 'options' | 'state'> = {
      ...bound,
      // Subscriptions on the worker's presence session, not operations.
      control: {
        ...bound.control,
        watchCancels: (workerId, listener) => registry.watchCancels(workerId, listener),
      },
      presence: {
        register: (workerId) => this.register(workerId),
        ...bound.presence,
        watchMembership: (workerId, listener) => registry.watchMembership(workerId, listener),
      },
      // Listening is a subscription on the mailbox's session (query-mailbox.ts), not an operation.
      queries: { ...bound.queries, listen: (workerId, listener) => mailbox.listen(workerId, listener) },
      payloads: { location: 'postgres', ...bound.payloads },
      // Group commit across runs. One run's steps each wait for a SQL function call: per run is as
      // fast and lower in latency on Postgres (docs/performance.md, "Group commit on Postgres").
      journalIndex: { groupsByDefault: false, ...bound.journalIndex },
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
      await this.mailbox.close().catch(() => undefined);
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
