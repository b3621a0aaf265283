/**
 * The Redis {@link Store}: lifecycle, error mapping and the replication guard here, applied once
 * to every capability by the one runner all of them go through (`op`); the work is in one module
 * per capability, each written against its contract (`OperationsOf`) and bound whole: leases.ts,
 * control.ts, checkpoints.ts, runs.ts and queries.ts, waits.ts (timers, signals), retention.ts,
 * payloads.ts, fleet.ts, schedules.ts, concurrency.ts, rate-limits.ts, updates.ts, journal-index.ts,
 * presence.ts, query-mailbox.ts, and the Lua scripts they call.
 *
 * Invariants:
 * 1. Every state change is one Lua script, so it is atomic on the server, and every time
 *    comparison inside it uses the server's TIME, never a worker's clock.
 * 2. No command is resent after a dropped connection (connection.ts): an operation either
 *    reports its outcome or fails with a BackendUnavailableError; it never runs twice silently.
 * 3. After close() every operation fails with BATON_CLOSED, including those in flight.
 * 4. close() does not wait for a connect under way: it closes that connection at once, so the
 *    connect fails with BATON_CLOSED instead of running on to its timeout.
 * 5. The data marker is checked at connect and after every reconnect until close()
 *    (data-marker.ts).
 * 6. With waitReplicas > 0, an operation that moves a run reports success only once that many
 *    replicas confirmed it (replication.ts).
 */
import type {
  Adapter,
  PresenceStore,
  RecordedDataLoss,
  Store,
  StoreAdapter,
  StoreDataLoss,
} from '@baton/core/adapter';
import { AdapterLifecycle, checkedStore } from '@baton/core/adapter';
import { CancelWatch } from './cancel-watch.js';
import { checkpoints } from './checkpoints.js';
import { concurrency } from './concurrency.js';
import { createConnection, type StoreConnection } from './connection.js';
import { storeContext, type StoreContext } from './context.js';
import { control } from './control.js';
import { DataMarker } from './data-marker.js';
import { toStoreError } from './errors.js';
import { fleet } from './fleet.js';
import { journalIndex } from './journal-index.js';
import { keyLayout, type KeyLayout } from './keys.js';
import { leases } from './leases.js';
import {
  resolveRedisStoreOptions,
  type RedisStoreOptions,
  type ResolvedRedisStoreOptions,
} from './options.js';
import { payloads } from './payloads.js';
import { presenceOperations, PresenceRegistry } from './presence.js';
import { promises } from './promises.js';
import { attributes } from './attributes.js';
import { ensureIndexed, reindexRuns, runQueries } from './queries.js';
import { RedisQueryMailbox } from './query-mailbox.js';
import { rateLimits } from './rate-limits.js';
import { confirmReplicated, REPLICATED_OPERATIONS } from './replication.js';
import { retention } from './retention.js';
import { runIndex } from './runs.js';
import { schedules } from './schedules.js';
import { checkEvalsha, loadScripts } from './scripts.js';
import { signals, timers } from './waits.js';
import { updates } from './updates.js';

/**
 * Creates a {@link Store} on one Redis primary (not Redis Cluster: keys carry no hash tags), named
 * directly (`redis://`) or found through Redis Sentinel (`redis+sentinel://`).
 * Options are validated at once: a malformed URL or option throws ConfigError here. Operations
 * called before connect() connect first. It has worker presence (optional in the contract),
 * bound to a named client connection.
 *
 * @example
 * const store = redisStore({ url: 'redis://127.0.0.1:6379', keyPrefix: 'baton:' });
 * await store.connect();
 * const lease = await store.leases.acquire('run-1', 'worker-a', 5_000);
 */
export function redisStore(
  options: RedisStoreOptions = {},
): Store & { readonly presence: PresenceStore } & RunReindexing {
  return checkedStore(new RedisStore(resolveRedisStoreOptions(options)));
}

/** The Redis store's one-off migration of the query indexes (queries.ts, README "Run queries"). */
export interface RunReindexing {
  /**
   * Indexes for runs.list and runs.count every run written before the indexes existed (connect
   * does this once per data set by itself). Idempotent and safe while workers run; returns how
   * many runs it indexed.
   */
  reindexRuns(): Promise<number>;
}

/** What an open store holds: its connection and the context the capability modules run in. */
interface Opened {
  connection: StoreConnection;
  ctx: StoreContext;
}

// The class's capabilities are the contract's members (presence always there), not restated
// here: the constructor builds them, each through its one runner so the store's rules apply to
// every method, and assigns them at once from an object TypeScript checks is complete.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
interface RedisStore extends StoreAdapter {
  readonly presence: PresenceStore;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
class RedisStore implements StoreAdapter, RunReindexing {
  readonly name = 'redis';

  /**
   * - `created`: nothing connected yet;
   * - `connecting`: connect() (or a first operation) is opening the connection;
   * - `open`: connected (ioredis reconnects by itself after a drop);
   * - `closed`: close() was called; every operation fails with BATON_CLOSED.
   */
  private readonly lifecycle = new AdapterLifecycle<Opened>({
    adapter: 'redis store',
    connectHint: 'await store.connect() first',
    closedHint: 'create a new store',
  });
  /** The connection a connect under way is opening, for close() to cut short (invariant 4). */
  private opening: StoreConnection | undefined;
  private readonly keys: KeyLayout;
  private readonly registry: PresenceRegistry;
  private readonly cancels: CancelWatch;
  /** Queries to runs: its operations, and the subscriber connection they are told on. */
  private readonly mailbox: RedisQueryMailbox;
  /** Tells a Redis that lost the data from one that only restarted or failed over (data-marker.ts). */
  private readonly marker = new DataMarker();

  constructor(private readonly options: ResolvedRedisStoreOptions) {
    this.keys = keyLayout(options.keyPrefix);
    this.registry = new PresenceRegistry(options, this.keys);
    this.cancels = new CancelWatch(options, this.keys);
    this.mailbox = new RedisQueryMailbox(options, this.keys);
    const bound = this.lifecycle.bindAll(
      {
        leases,
        control,
        checkpoints,
        runs: { ...runIndex, ...runQueries },
        attributes,
        timers,
        signals,
        presence: presenceOperations(this.registry),
        retention,
        payloads,
        fleet,
        schedules,
        concurrency,
        rateLimits,
        updates,
        promises,
        journalIndex,
        queries: this.mailbox.operations,
      },
      this.op,
    );
    const capabilities: Omit<RedisStore, keyof Adapter | 'onDataLoss' | 'lastDataLoss' | 'reindexRuns'> = {
      ...bound,
      // A subscription on a connection of its own (cancel-watch.ts), not an operation.
      control: {
        ...bound.control,
        watchCancels: (workerId, listener) => this.cancels.watch(workerId, listener),
      },
      // Listening is a subscription on the mailbox's connection (query-mailbox.ts), not an operation.
      queries: {
        ...bound.queries,
        listen: (workerId, listener) => this.mailbox.listen(workerId, listener),
      },
      payloads: { location: 'redis', ...bound.payloads },
      // Group commit across runs.
      journalIndex: { groupsByDefault: true, ...bound.journalIndex },
    };
    Object.assign(this, capabilities);
  }

  connect(): Promise<void> {
    return this.lifecycle.connect(
      () => this.setUp(),
      (opened) => opened.connection.close(),
    );
  }

  close(): Promise<void> {
    const cutShort = this.opening?.close();
    return this.lifecycle.close(async (opened) => {
      // All run even when one fails; a close that fails still leaves the store closed.
      await Promise.allSettled([
        cutShort,
        this.registry.close(),
        this.cancels.close(),
        this.mailbox.close(),
        opened?.connection.close(),
      ]);
    });
  }

  onDataLoss(listener: (loss: StoreDataLoss) => void): void {
    this.marker.onLoss(listener);
  }

  lastDataLoss(): Promise<RecordedDataLoss | undefined> {
    return this.op('lastDataLoss', (ctx) => this.marker.last(ctx));
  }

  reindexRuns(): Promise<number> {
    return this.op('reindexRuns', (ctx) => reindexRuns(ctx));
  }

  // -------------------------------------------------------------------------------------------

  /**
   * Runs one operation (`leases.acquire`): connects first when needed, refuses after close(),
   * waits for the replicas when it moves a run (invariant 6), maps errors (toStoreError). Every
   * capability's methods go through it (`lifecycle.bind`), so these rules are written once.
   */
  private readonly op = async <T>(operation: string, work: (ctx: StoreContext) => Promise<T>): Promise<T> => {
    const { ctx, connection } = await this.lifecycle.openOrConnect(operation, () => this.connect());
    try {
      const result = await work(ctx);
      if (this.options.waitReplicas > 0 && REPLICATED_OPERATIONS.has(operation)) {
        await confirmReplicated(connection, this.options, operation, connection.generation());
      }
      return result;
    } catch (err) {
      if (this.isClosed()) throw this.lifecycle.closedError(operation, err);
      throw toStoreError(err, { url: this.options.displayUrl, operation });
    }
  };

  /** Opens the connection, checks it can run scripts and reads the data marker. */
  private async setUp(): Promise<Opened> {
    let connection: StoreConnection | undefined;
    try {
      loadScripts();
      connection = createConnection(this.options);
      this.opening = connection;
      await connection.open();
      const ctx = storeContext(connection.redis, this.keys);
      // EVALSHA first, on its own, so that a user lacking scripting is told about it by name. The
      // clock script then proves the server answers and lets this user run scripts that read TIME;
      // the marker's first read only remembers it (or writes it): nothing to compare with yet.
      await checkEvalsha(connection.redis);
      await Promise.all([ctx.run('clock', [], []), this.marker.check(ctx)]);
      // A data set from before the query indexes (or an older layout of them) is indexed once.
      await ensureIndexed(ctx);
      // 'ready' fires again after every reconnect (the first one has passed already): a server
      // that came back may have come back empty.
      connection.redis.on('ready', () => void this.marker.recheck(ctx, () => !this.isClosed()));
      return { connection, ctx };
    } catch (err) {
      await connection?.close();
      if (this.isClosed()) throw this.lifecycle.closedError('connect', err);
      throw toStoreError(err, { url: this.options.displayUrl, operation: 'connect' });
    } finally {
      this.opening = undefined;
    }
  }

  /** A method, not a comparison, because close() may change the state across an await. */
  private isClosed(): boolean {
    return this.lifecycle.state === 'closed';
  }
}
